-- Dashboard accounts (DESIGN.md section 4, "Accounts (dashboard)"). An account owns API keys
-- (031 adds api_keys.account_id) and has a plan; its keys are served with the account's
-- plan and stop (403) while the account is disabled.
-- Why ReplacingMergeTree(updated_at) keyed by id: like api_keys (009), a change (plan,
-- status, a password set through an invitation) is a new row with a later updated_at, read
-- with FINAL; accounts number in the thousands, so FINAL and the lookup by email (not the
-- sort key) read a few granules.
-- password_hash is "scrypt$N$r$p$salt$hash" (api/dashboard/passwords.ts): the parameters
-- travel with each hash, so they can be raised later without invalidating old hashes.
-- An operator invitation is a row with status 'invited', no password and the SHA-256 of a
-- one-time invite token (invite_hash) that expires at invite_expires_at; accepting it sets
-- the password and clears both. The engine has no unique constraint: the service checks
-- that an email is free under a claim in the shared rate-limit store (docs/dashboard.md).
CREATE TABLE IF NOT EXISTS accounts
(
    id                 String,
    email              String,
    password_hash      String,
    plan               LowCardinality(String),
    status             LowCardinality(String),
    invite_hash        String DEFAULT '',
    invite_expires_at  DateTime64(3, 'UTC') DEFAULT 0,
    created_at         DateTime64(3, 'UTC'),
    updated_at         DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY id;
