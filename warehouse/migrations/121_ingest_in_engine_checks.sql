-- Validation in the engine (issue 40): an NDJSON body goes to the engine as its lines, and
-- the record checks of ingest/steps/ (validate, resolve-protocol, normalise) run here as SQL.
-- Why: on one JavaScript thread, JSON.parse and the schema check of every record held
-- POST /admin/ingest at 0.17-0.23 of the engine's own insert of the same bytes; simdjson in
-- the engine parses a line in a fraction of that, on the engine's threads.
--
-- ingest_lines: a batch's lines as received (one String each, nothing parsed, nothing
-- coerced: LineAsString has no malformed input), numbered from 1 like the body's lines.
-- Memory: a batch lives here only between its load and its routing, and the one writer of
-- the process (ingest/write-queue.ts) removes it after; a crash loses only what the source
-- re-sends (the caller got no answer).
CREATE TABLE IF NOT EXISTS ingest_lines
(
    batch String,
    n     UInt32,
    line  String
)
ENGINE = Memory;

-- Each step is its own subquery level: an alias used in a later expression is copied into
-- it before the plan merges the copies, so one level of aliases over a dozen fields built a
-- tree whose analysis alone took seconds a statement (bench/RESULTS.md, issue 40).
-- Per-row work is kept small: the line is parsed once (JSONExtractKeysAndValuesRaw, each
-- field's JSON text as the engine's reader re-writes it), and every check reads that text: its
-- first character is its JSON type ('"' string, '[' array, 't'/'f' boolean, 'n' null, '{'
-- object, else a number). A first version calling JSONType/JSONExtract per field and a Map
-- with lambdas over it ran at 0.05 of the engine's own insert (bench/RESULTS.md, issue 40).
--
-- Ajv's integer (ingest/steps/validate.ts): a JSON number that is whole (1.0 and 1e3 are),
-- then its bounds, compared as doubles as JSON.parse's numbers are; '' when it passes.
-- f: the field's name for the message; r: its JSON text.
CREATE FUNCTION IF NOT EXISTS ingest_int_check AS (f, r, lo, hi) -> multiIf(
    substring(r, 1, 1) NOT IN ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')
        OR toFloat64OrZero(r) != floor(toFloat64OrZero(r)), concat(f, ' must be integer'),
    toFloat64OrZero(r) < lo, concat(f, ' must be >= ', toString(lo)),
    toFloat64OrZero(r) > hi, concat(f, ' must be <= ', toString(hi)),
    '');

-- Ajv's string type, the same way.
CREATE FUNCTION IF NOT EXISTS ingest_str_check AS (f, r) -> if(startsWith(r, '"'), '', concat(f, ' must be string'));

-- A JSON string's text: without escapes it is between its quotes (no parse); with them, decoded.
CREATE FUNCTION IF NOT EXISTS ingest_unquote AS (r) ->
    if(position(r, '\\') = 0, substring(r, 2, length(r) - 2), JSONExtractString(r));

-- The checks, one row per line: code '' (a valid row, its columns filled), a rejection code
-- with the same message as the JavaScript check, 'skip' (a blank line) or 'defer'.
-- Why 'defer': what the engine's JSON reader decides differently from JSON.parse goes back to
-- the JavaScript check, which then decides it exactly as before: invalid UTF-8 (decoded as
-- U+FFFD there), any surrogate escape (a lone one is refused there with its path), JSON the
-- engine's reader refuses (not_json's message is V8's own; numbers past UInt64 and nesting
-- past the reader's depth are valid JSON to JSON.parse), duplicate keys (the last wins in
-- JSON.parse, the first here), and a valid record without transaction_index: its record id
-- (migration 110) takes a counted position that the writer assigns from stored state
-- (ingest/record-id.ts), which only the JavaScript path does. Producers that send
-- transaction_index (the chain's own position) are decided here whole.
-- The order of the checks is Ajv's: the object, then the first missing required field, then
-- each field in the schema's order (type, then bounds or lengths, then pattern, then array
-- items), then the registry (resolve-protocol.ts), then normalise.ts's two.
-- A parameterised view: the batch, the record size limit (INGEST_MAX_RECORD_BYTES) and the
-- registry (every protocol, active or not, as resolve-protocol.ts reads it: names and their
-- programs, in pairs) are bound parameters of each call. The registry as parameters rather
-- than a join: the pipeline holds it already, and two joins on protocols FINAL cost more to
-- plan (~0.8 s a statement under load) than the checks of 20,000 lines to run.
CREATE VIEW IF NOT EXISTS ingest_line_checks AS
SELECT
    n,
    l AS line,
    multiIf(
        blank, 'skip',
        NOT utf8, 'defer',
        length(l) > {max_bytes:UInt32}, 'oversized',
        surrogate, 'defer',
        NOT json, 'defer',
        NOT object, 'not_object',
        length(keys) != length(arrayDistinct(keys)), 'defer',
        missing != '', 'schema',
        bad != '', 'schema',
        NOT has({names:Array(String)}, protocol_name), 'unknown_protocol',
        NOT has({programs:Array(String)}, program_id), 'program_unregistered',
        owner != protocol_name, 'program_mismatch',
        NOT has_accounts AND NOT has_count, 'accounts_count_missing',
        -- The slot is the record id's high part (migration 110): at most 2^34 - 2
        -- (core/limits/record-id.ts MAX_RID_SLOT), as normalise.ts refuses. A numeric slot
        -- is compared as the double JSON.parse reads (any past 2^53 is far past the bound).
        if(startsWith(r_slot, '"'), length(slot_text) > 11 OR toUInt64OrZero(slot_text) > 17179869182,
           toFloat64OrZero(r_slot) > 17179869182), 'slot_out_of_range',
        NOT has(keys, 'transaction_index'), 'defer',
        '') AS code,
    multiIf(
        code = 'oversized', concat('record is ', toString(length(l)), ' bytes; the limit is ', toString({max_bytes:UInt32})),
        code = 'not_object', 'record must be a JSON object',
        code = 'schema' AND missing != '', concat('missing required field ', missing),
        code = 'schema', bad,
        code = 'unknown_protocol', concat('unknown protocol_name "', protocol_name, '"'),
        code = 'program_unregistered', concat('program_id "', program_id, '" is not in the protocol registry; the program of ', protocol_name, ' is ', name_program),
        code = 'program_mismatch', concat('program_id "', program_id, '" is the program of ', owner, ', not of ', protocol_name),
        code = 'accounts_count_missing', 'accounts_count is required when accounts is absent',
        code = 'slot_out_of_range', 'slot is out of range (at most 17179869182: the record id''s limit)',
        '') AS reason,
    signature, instruction_index, transaction_index, slot, block_time, program_id, protocol_name, instruction_type,
    fee, compute_units, accounts, accounts_count, success, error_message, log_messages, raw_data,
    cityHash64(signature) AS sig_key,
    transform(protocol_name, {names:Array(String)}, {programs:Array(String)}, '') AS name_program,
    transform(program_id, {programs:Array(String)}, {names:Array(String)}, '') AS owner
FROM
(
    SELECT
        *,
        multiIf(
            NOT startsWith(r_sig, '"'), 'signature must be string',
            NOT match(r_sig, '^"[1-9A-HJ-NP-Za-km-z]{64,88}"$'), 'signature must be a Base58 signature of 64-88 characters',
            -- instruction_index and transaction_index are parts of the record id (110): their widths are its limits.
            has(keys, 'instruction_index') AND ingest_int_check('instruction_index', r_ii, 0, 8191) != '', ingest_int_check('instruction_index', r_ii, 0, 8191),
            has(keys, 'transaction_index') AND ingest_int_check('transaction_index', r_ti, 0, 65535) != '', ingest_int_check('transaction_index', r_ti, 0, 65535),
            ingest_int_check('slot', r_slot, 0, inf) != '' AND NOT match(r_slot, '^"(0|[1-9][0-9]{0,19})"$'),
                'slot must be a non-negative integer or a decimal string',
            ingest_int_check('block_time', r_bt, 0, 4294967295) != '', ingest_int_check('block_time', r_bt, 0, 4294967295),
            NOT startsWith(r_pid, '"'), 'program_id must be string',
            NOT match(r_pid, '^"[1-9A-HJ-NP-Za-km-z]{32,44}"$'), 'program_id must be a Base58 address of 32-44 characters',
            NOT startsWith(r_pn, '"'), 'protocol_name must be string',
            NOT match(r_pn, '^"[a-z][a-z0-9_]{0,63}"$'), 'protocol_name must be a lowercase snake_case protocol name of 1-64 characters, e.g. jupiter_v6',
            NOT startsWith(r_it, '"'), 'instruction_type must be string',
            lengthUTF8(instruction_type) > 128, 'instruction_type must NOT have more than 128 characters',
            lengthUTF8(instruction_type) < 1, 'instruction_type must NOT have fewer than 1 characters',
            ingest_int_check('fee', r_fee, 0, 9007199254740991) != '', ingest_int_check('fee', r_fee, 0, 9007199254740991),
            ingest_int_check('compute_units', r_cu, 0, 4294967295) != '', ingest_int_check('compute_units', r_cu, 0, 4294967295),
            has_accounts AND NOT startsWith(r_acc, '['), 'accounts must be array',
            length(acc_items) > 1024, 'accounts must NOT have more than 1024 items',
            acc_bad > 0,
                concat('accounts.', toString(acc_bad - 1),
                       if(startsWith(acc_items[acc_bad], '"'), ' must be a Base58 address of 32-44 characters', ' must be string')),
            has_count AND ingest_int_check('accounts_count', r_ac, 0, 65535) != '', ingest_int_check('accounts_count', r_ac, 0, 65535),
            r_ok NOT IN ('true', 'false'), 'success must be boolean',
            has(keys, 'error_message') AND ingest_str_check('error_message', r_em) != '', ingest_str_check('error_message', r_em),
            has(keys, 'log_messages') AND NOT startsWith(r_lm, '"')
                AND NOT (startsWith(r_lm, '[') AND arrayAll(x -> startsWith(x, '"'), lm_items)),
                'log_messages must be a string or an array of strings',
            has(keys, 'raw_data') AND ingest_str_check('raw_data', r_rd) != '', ingest_str_check('raw_data', r_rd),
            '') AS bad,
        -- The row, as normaliseRecord (ingest/steps/normalise.ts) builds it. The fields whose
        -- pattern passed hold no escapes: their text is between their quotes. Numbers are whole
        -- doubles at most 2^53 once checked (a numeric slot past the id's bound is refused above): exact.
        substring(r_sig, 2, length(r_sig) - 2) AS signature,
        toUInt16(toFloat64OrZero(r_ii)) AS instruction_index,
        toUInt32(toFloat64OrZero(r_ti)) AS transaction_index,
        if(startsWith(r_slot, '"'), substring(r_slot, 2, length(r_slot) - 2), toString(toUInt64(toFloat64OrZero(r_slot)))) AS slot_text,
        toUInt64OrZero(slot_text) AS slot,
        toUInt32(toFloat64OrZero(r_bt)) AS block_time,
        substring(r_pid, 2, length(r_pid) - 2) AS program_id,
        substring(r_pn, 2, length(r_pn) - 2) AS protocol_name,
        toUInt64(toFloat64OrZero(r_fee)) AS fee,
        toUInt32(toFloat64OrZero(r_cu)) AS compute_units,
        arrayMap(x -> substring(x, 2, length(x) - 2), acc_items) AS accounts,
        if(has_count, toUInt16(toFloat64OrZero(r_ac)), toUInt16(length(accounts))) AS accounts_count,
        r_ok = 'true' AS success,
        ingest_unquote(r_em) AS error_message,
        if(startsWith(r_lm, '['), arrayStringConcat(arrayMap(x -> ingest_unquote(x), lm_items), '\n'), ingest_unquote(r_lm)) AS log_messages,
        ingest_unquote(r_rd) AS raw_data
    FROM
    (
        SELECT
            *,
            has(keys, 'accounts') AS has_accounts,
            has(keys, 'accounts_count') AS has_count,
            multiIf(NOT has(keys, 'signature'), 'signature', NOT has(keys, 'slot'), 'slot', NOT has(keys, 'block_time'), 'block_time',
                    NOT has(keys, 'program_id'), 'program_id', NOT has(keys, 'protocol_name'), 'protocol_name',
                    NOT has(keys, 'instruction_type'), 'instruction_type', NOT has(keys, 'fee'), 'fee',
                    NOT has(keys, 'compute_units'), 'compute_units', NOT has(keys, 'success'), 'success', '') AS missing,
            if(startsWith(r_acc, '['), JSONExtractArrayRaw(r_acc), []) AS acc_items,
            arrayFirstIndex(x -> NOT match(x, '^"[1-9A-HJ-NP-Za-km-z]{32,44}"$'), acc_items) AS acc_bad,
            if(startsWith(r_lm, '['), JSONExtractArrayRaw(r_lm), []) AS lm_items,
            ingest_unquote(r_it) AS instruction_type
        FROM
        (
            -- Each field's JSON text ('' when absent).
            SELECT
                n, l, blank, utf8, surrogate, json, object, keys,
                vals[indexOf(keys, 'signature')] AS r_sig, vals[indexOf(keys, 'instruction_index')] AS r_ii,
                vals[indexOf(keys, 'transaction_index')] AS r_ti,
                vals[indexOf(keys, 'slot')] AS r_slot, vals[indexOf(keys, 'block_time')] AS r_bt,
                vals[indexOf(keys, 'program_id')] AS r_pid, vals[indexOf(keys, 'protocol_name')] AS r_pn,
                vals[indexOf(keys, 'instruction_type')] AS r_it, vals[indexOf(keys, 'fee')] AS r_fee,
                vals[indexOf(keys, 'compute_units')] AS r_cu, vals[indexOf(keys, 'accounts')] AS r_acc,
                vals[indexOf(keys, 'accounts_count')] AS r_ac, vals[indexOf(keys, 'success')] AS r_ok,
                vals[indexOf(keys, 'error_message')] AS r_em, vals[indexOf(keys, 'log_messages')] AS r_lm,
                vals[indexOf(keys, 'raw_data')] AS r_rd
            FROM
            (
                SELECT *, kv.1 AS keys, kv.2 AS vals
                FROM
                (
                    -- The one parse of the line.
                    SELECT *, if(object, JSONExtractKeysAndValuesRaw(l), []) AS kv
                    FROM
                    (
                        SELECT
                            n, l,
                            match(l, '^[ \t\v\f\r]*$') AS blank,
                            isValidUTF8(l) AS utf8,
                            position(l, '\\ud') > 0 OR position(l, '\\uD') > 0 AS surrogate,
                            utf8 AND NOT surrogate AND isValidJSON(l) AS json,
                            json AND startsWith(trimLeft(l), '{') AS object
                        FROM
                        (
                            -- A CRLF's CR, the body's byte-order mark (line 1) and a record's own are not the record.
                            SELECT n, if(startsWith(l0, '\xEF\xBB\xBF'), substring(l0, 4), l0) AS l
                            FROM
                            (
                                SELECT n, if(endsWith(line, '\r'), substring(line, 1, length(line) - 1), line) AS l0
                                FROM ingest_lines
                                WHERE batch = {batch:String}
                            )
                        )
                    )
                )
            )
        )
    )
);

-- A batch's checked lines, read by the routing statements (valid rows to transactions,
-- refusals to dead_letters, the rest to the caller) so the checks run once a batch.
CREATE TABLE IF NOT EXISTS ingest_checked
(
    batch             String,
    n                 UInt32,
    line              String,
    code              LowCardinality(String),
    reason            String,
    signature         String,
    instruction_index UInt16,
    transaction_index UInt32,
    slot              UInt64,
    block_time        UInt32,
    program_id        String,
    protocol_name     String,
    instruction_type  String,
    fee               UInt64,
    compute_units     UInt32,
    accounts          Array(String),
    accounts_count    UInt16,
    success           Bool,
    error_message     String,
    log_messages      String,
    raw_data          String,
    sig_key           UInt64
)
ENGINE = Memory;
