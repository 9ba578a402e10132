-- Protocol registry: program id -> protocol name, with an active flag. Records of inactive
-- protocols are stored but hidden from every answer until the operator activates them.
-- ReplacingMergeTree keyed by name: a change is a new row with a later updated_at, read
-- with FINAL (a dozen rows, so FINAL costs nothing).
CREATE TABLE IF NOT EXISTS protocols
(
    protocol_name String,
    program_id    String,
    active        Bool,
    updated_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY protocol_name;

-- The initial facts, stamped at the epoch so any operator change made later wins.
INSERT INTO protocols (protocol_name, program_id, active, updated_at) VALUES
    ('jupiter_v6',      'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',  true,  0),
    ('jupiter_v4',      'JUP4Fb2cqiRUcaTHdrPC8h2gNsA2ETXiPDD33WcGuJB',  true,  0),
    ('raydium_amm_v3',  'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK', true,  0),
    ('raydium_cp_swap', 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C', true,  0),
    ('whirlpool',       'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',  true,  0),
    ('pump_fun',        '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P',  true,  0),
    ('pump_amm',        'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA',  true,  0),
    ('raydium_amm_v4',  '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8', false, 0),
    ('meteora_dlmm',    'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo',  false, 0),
    ('phoenix_v1',      'PhoeNiXZ8ByJGLkxNfZRnkUfjvmuYqLR89jjFHGqdXY',  false, 0),
    ('drift_v2',        'dRiftyHA39MWEi3m9aunc5MzRF1JYuBsbn6VPcn33UH',  false, 0),
    ('kamino_lending',  'KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD',  false, 0);
