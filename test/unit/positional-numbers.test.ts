// JSON-RPC's and MCP's positional params (api/services/positional/) with a number JSON.parse could not
// keep: 1e400 is read as Infinity. Refused as a value out of range, quoted as itself, on both
// doors alike (MCP reads its arguments with JSON.parse too, without JSON-RPC's raw-text scan).
import { describe, expect, it } from 'vitest';
import { AppError, Errors } from '../../core/errors.ts';
import { validateParams } from '../../api/services/positional/param-checks.ts';

function refusal(method: string, params: unknown[]): AppError {
  try {
    validateParams(method, params);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  return expect.unreachable('the params were accepted');
}

describe('a number parsed as Infinity', () => {
  it('is invalid params naming the field, not an unparsable filter quoted as null', () => {
    const inFilter = refusal('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: { gte: Number.POSITIVE_INFINITY } }]);
    expect(inFilter.kind).toBe(Errors.invalidParams);
    expect(inFilter.message).toBe('options.blockTime.gte must be a finite number (got Infinity); JSON numbers past ±1.8e308 are read as Infinity');
    const limit = refusal('getTransactions', [{ limit: Number.NEGATIVE_INFINITY }]);
    expect(limit.message).toBe('options.limit must be a finite number (got -Infinity); JSON numbers past ±1.8e308 are read as Infinity');
  });

  it('leaves a wrong type in a filter an unparsable filter, as SPEC says', () => {
    expect(refusal('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: { gte: '1' } }]).kind).toBe(Errors.unparsableFilter);
  });
});
