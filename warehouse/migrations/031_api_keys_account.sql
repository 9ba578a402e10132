-- Keys created in the dashboard belong to an account and carry an environment label
-- (production, staging, development or a short free text; SPEC.md "Authentication":
-- separate keys per environment are recommended).
-- Why columns with defaults rather than a new table: the key snapshot of every API process
-- (api/access/key-authenticator.ts) reads this table whole; keys made by the operator API
-- keep account_id '' (no account: their own plan applies) and environment ''.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS account_id String DEFAULT '' AFTER name;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS environment String DEFAULT '' AFTER account_id;
