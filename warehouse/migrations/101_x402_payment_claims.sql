-- Claims of x402 payments (docs/x402.md "Failures"): a payment runs one call in the whole
-- deployment, not one per API process. A process that verified a payment inserts a claim
-- row, then reads the payment's first claim: only the process whose row comes first runs the
-- call, so a payment replayed to another replica is refused there before anything runs.
-- claimed_at is the server's clock at insert (DEFAULT now64), so claims from every process
-- are ordered by one clock; claim (a random token) breaks ties. Kept one day: past a Solana
-- blockhash's life (about 80 s) the chain refuses the transaction anyway.
CREATE TABLE IF NOT EXISTS x402_payment_claims
(
    payment_id  String,
    claim       String,
    claimed_at  DateTime64(6, 'UTC') DEFAULT now64(6)
)
ENGINE = MergeTree
ORDER BY (payment_id, claimed_at)
TTL toDateTime(claimed_at) + INTERVAL 1 DAY;
