-- One address table again: 040's tx_by_address_listing goes, 003's tx_by_address stays.
-- Why: the listing table carried every listed field on each of a record's ~5.4 address
-- rows, the 88-character signature among them (~64 B a row that no codec shrinks: random
-- base58), so it cost ~450 B a record, 58 % of the store (772 B a record at 10M). A billion
-- records would need ~770 GB. Without it the store is ~320 B a record (bench/RESULTS.md,
-- "Storage diet"). Address pages read their references from tx_by_address (the same key,
-- order and cursor as 040) and the page's records from tx_by_signature_v2 by primary key.
-- Nothing is copied: tx_by_address has held every address row since 003, so no record is
-- lost or doubled by dropping the copy.
DROP VIEW IF EXISTS tx_by_address_listing_mv;

DROP TABLE IF EXISTS tx_by_address_listing;
