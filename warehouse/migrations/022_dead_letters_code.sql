-- The rejection's machine code beside its human reason (ingest/rejection.ts): operators
-- count and filter dead letters by kind without parsing English text. Rows written before
-- this migration keep an empty code; their reason still says what happened.
ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS code LowCardinality(String) DEFAULT '' AFTER position;
