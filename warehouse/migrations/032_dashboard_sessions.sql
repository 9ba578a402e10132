-- Dashboard sessions, held server-side so that signing out ends a session everywhere (a
-- stolen cookie of an ended session is worth nothing) and several API processes share them.
-- Only the SHA-256 of the session token is stored (token_hash), like API keys (009): the
-- token itself lives only in the browser's HTTP-only cookie. csrf_token is the session's
-- synchronizer token, sent back by the page in a header on every state-changing call; it
-- is useless without the cookie.
-- Why ReplacingMergeTree(updated_at) keyed by token_hash: a session is read by its token
-- hash on each dashboard call (a point lookup on the sort key), and ending it is a new row
-- with ended = 1. Why the TTL: expired sessions are kept one day for the audit of recent
-- sign-ins, then dropped; expiry itself is checked on every read (expires_at).
CREATE TABLE IF NOT EXISTS dashboard_sessions
(
    token_hash  FixedString(64),
    account_id  String,
    csrf_token  String,
    ended       UInt8 DEFAULT 0,
    created_at  DateTime64(3, 'UTC'),
    expires_at  DateTime64(3, 'UTC'),
    updated_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY token_hash
TTL toDateTime(expires_at) + INTERVAL 1 DAY;
