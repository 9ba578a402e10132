-- API keys (DESIGN.md section 4). Only the SHA-256 hash of the secret is stored; the secret
-- itself is shown once, in the creation answer. key_prefix (the first characters of the
-- secret) lets an operator recognise a key in listings without it being usable.
-- ReplacingMergeTree(updated_at) keyed by id: a status or plan change is a new row with a
-- later updated_at, read with FINAL. Keys are few (thousands at most), so FINAL and the
-- lookup by key_hash (not the sort key) scan a table that fits in one granule or a few;
-- every API process caches lookups for under a second (revocation must take effect within
-- one second everywhere).
-- last_used_at is not here: it is max(last_used_at) of api_key_usage (009), so recording
-- use never rewrites this row and can never race an operator's revocation.
CREATE TABLE IF NOT EXISTS api_keys
(
    id          String,
    key_hash    FixedString(64),
    key_prefix  String,
    name        String,
    plan        LowCardinality(String),
    status      LowCardinality(String),
    created_at  DateTime64(3, 'UTC'),
    updated_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY id;
