-- Cheaper record checks in the engine (issue 40, checks40): migration 121's view, the same
-- answer for every line (code, message and row: test/engine/engine-checks.test.ts runs both
-- over the hostile corpus and the record variants), for less work a line. Why: the checks
-- alone cost about as much as the engine's whole insert of the same bytes, and held
-- POST /admin/ingest below 0.8 of it whatever the number of statements (bench/RESULTS.md,
-- "Single-pass checks in the engine" and "Cheaper engine checks"). Measured per part, the
-- view's time went to the one parse (kept: every check reads its text), the accounts' items
-- (parsed a second time and matched one by one), the integer checks, copying every line for
-- a CR or a byte-order mark it rarely has, and the duplicate-key test; each of the last four
-- is replaced here by a cheaper test that decides the common case, the exact sequence of 121
-- kept for the lines that fail it. 7-14 % less work a line: not enough for 0.8 (RESULTS).
--
-- A non-negative integer as the engine's reader re-writes a number ('' when absent): a
-- decimal without sign, fraction, exponent or leading zero is exactly the text of its
-- UInt64 value, and at most hi is then what ingest_int_check(f, r, 0, hi) accepts (a whole
-- double within the bound; every hi here is at most 2^53, so the comparison is exact).
-- Anything else (a fraction, a sign, an exponent the reader kept, a value past UInt64) fails
-- this test and goes through ingest_int_check as before.
CREATE FUNCTION IF NOT EXISTS ingest_uint_fast AS (r, hi) -> toString(toUInt64OrZero(r)) = r AND toUInt64OrZero(r) <= hi;

-- A line without its CRLF's CR, then without a byte-order mark (121's two rewrites).
CREATE FUNCTION IF NOT EXISTS ingest_without_cr AS (s) -> if(endsWith(s, '\r'), substring(s, 1, length(s) - 1), s);
CREATE FUNCTION IF NOT EXISTS ingest_line_text AS (s) ->
    if(startsWith(ingest_without_cr(s), '\xEF\xBB\xBF'), substring(ingest_without_cr(s), 4), ingest_without_cr(s));

-- The view is replaced whole (a view cannot be altered in place); only the start of a
-- process runs migrations, before any batch is checked.
DROP VIEW IF EXISTS ingest_line_checks;

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
        arrayUniq(keys) != length(keys), 'defer',
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
        -- The common case first: a row that passes every field's check by a cheap sufficient
        -- test is '' without the sequence below, which then runs only for the rest.
        if(match(r_sig, '^"[1-9A-HJ-NP-Za-km-z]{64,88}"$')
           AND (r_ii = '' OR ingest_uint_fast(r_ii, 8191)) AND (r_ti = '' OR ingest_uint_fast(r_ti, 65535))
           AND toString(toUInt64OrZero(r_slot)) = r_slot AND ingest_uint_fast(r_bt, 4294967295)
           AND match(r_pid, '^"[1-9A-HJ-NP-Za-km-z]{32,44}"$') AND match(r_pn, '^"[a-z][a-z0-9_]{0,63}"$')
           AND startsWith(r_it, '"') AND lengthUTF8(instruction_type) BETWEEN 1 AND 128
           AND ingest_uint_fast(r_fee, 9007199254740991) AND ingest_uint_fast(r_cu, 4294967295)
           AND (NOT has_accounts OR acc_fast) AND (NOT has_count OR ingest_uint_fast(r_ac, 65535))
           AND r_ok IN ('true', 'false') AND (r_em = '' OR startsWith(r_em, '"'))
           AND (r_lm = '' OR startsWith(r_lm, '"')) AND (r_rd = '' OR startsWith(r_rd, '"')), '',
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
            '')) AS bad,
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
        if(acc_fast, if(r_acc = '[]', [], splitByString('","', substring(r_acc, 3, length(r_acc) - 4))),
           arrayMap(x -> substring(x, 2, length(x) - 2), acc_items)) AS accounts,
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
            -- accounts as the engine's reader re-writes it (no blanks; a valid item holds no ',' or
            -- '"'): one pattern over the whole array decides the common case (every item valid,
            -- at most 1024), whose items are then its text split at '","'. The items are parsed
            -- only for the rest, as before (a fast row's are not needed: no check reads them).
            match(r_acc, '^\\[("[1-9A-HJ-NP-Za-km-z]{32,44}"(,"[1-9A-HJ-NP-Za-km-z]{32,44}")*)?\\]$')
                AND countSubstrings(r_acc, ',') < 1024 AS acc_fast,
            if(acc_fast OR NOT startsWith(r_acc, '['), [], JSONExtractArrayRaw(r_acc)) AS acc_items,
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
                            -- Only a line that has either is rewritten (a rewrite copies every line).
                            SELECT n, if(endsWith(line, '\r') OR startsWith(line, '\xEF\xBB\xBF'), ingest_line_text(line), line) AS l
                            FROM ingest_lines
                            WHERE batch = {batch:String}
                        )
                    )
                )
            )
        )
    )
);
