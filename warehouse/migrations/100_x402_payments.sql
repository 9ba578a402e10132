-- Settled x402 payments (docs/x402.md): one row per paid call, written when its payment
-- settled. The calls themselves are counted in api_key_usage under the key id
-- "x402:<payer>", like any key's; this table adds what was paid, so the operator reads
-- revenue and calls per payer. Amounts are in the token's atomic units (USDC: 6 decimals).
-- Kept 400 days: revenue is bookkeeping.
CREATE TABLE IF NOT EXISTS x402_payments
(
    settled_at   DateTime64(3, 'UTC'),
    payer        String,
    amount       UInt64,
    asset        LowCardinality(String),
    network      LowCardinality(String),
    transaction  String,
    interface    LowCardinality(String),
    route        LowCardinality(String),
    cost_units   UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(settled_at)
ORDER BY (payer, settled_at)
TTL toDateTime(settled_at) + INTERVAL 400 DAY;
