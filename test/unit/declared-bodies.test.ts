// The bodies declared once (issue 36): the export body, the SQL bodies and the subscription's
// arguments are each one request declaration, checked by the one check, from which REST's
// body schema and GraphQL's input types are derived. No engine: the checks and documents only.
import { buildSchema, type GraphQLInputObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AppError, wordMessage } from '../../core/errors.ts';
import { filterBody, sqlBody } from '../../api/services/exports/export-schemas.ts';
import { FILTER_EXPORT, filterExportSpec, SQL_EXPORT, sqlExportSpec } from '../../api/services/exports/export-request.ts';
import { exportInputSdl } from '../../api/doors/graphql/export-plans.ts';
import { GRAPHQL_WORDING } from '../../api/doors/graphql/errors.ts';
import { subscriptionFieldsSdl } from '../../api/doors/graphql/subscriptions/schema.ts';
import { checkSqlBody, SQL_EXECUTION, SQL_QUERY } from '../../api/services/sql/query-request.ts';

const VISIBLE = ['jupiter_v6', 'raydium_amm'];
const REST = { params: {}, hints: { protocols: 'GET /api/v1/stats lists the available ones', coarserBucket: '' } };

/** The refusal of `body` as each export door words it. */
function refusals(body: unknown): { rest: string; graphql: string } {
  try {
    filterExportSpec(body, VISIBLE);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { rest: wordMessage(err.message, REST), graphql: wordMessage(err.message, GRAPHQL_WORDING) };
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

describe('the export body, declared once', () => {
  it('is refused by the same rule on REST and GraphQL, each door naming the field its way', () => {
    const cases: [unknown, string][] = [
      [{ columns: ['fee', 'nope'] }, 'columns[1] "nope" is not an exportable column'],
      [{ columns: ['fee', 'fee'] }, 'columns[1] "fee" is listed twice'],
      [{ columns: ['fee', 'slot', 'fee', 'slot', 'fee'] }, 'columns[2] "fee" is listed twice'],
      [{ splits: { train: 0.5 } }, 'splits must sum to 1 (train + test + val = 0.5)'],
      [{ splits: { train: 2 } }, 'splits.train must be a number from 0 to 1'],
      [{ filters: { protocols: ['jupiter_v6', 'nope_v1'] } }, 'filters.protocols[1]: unknown protocol "nope_v1"'],
      [{ filters: { dateRange: { start: '2025-01-02', end: '2025-01-01' } } }, 'filters.dateRange.start (2025-01-02) is after .end (2025-01-01)'],
      [{ filters: { dateRange: { end: '2107-01-01' } } }, 'filters.dateRange.end must be from 1970-01-01 to 2106-02-07'],
      [{ sampling: { rate: 0.5, stratifyBy: 'hour' } }, 'sampling.stratifyBy is for strategy STRATIFIED'],
      [{ columns: ['signature'], preprocessing: { normalize: ['fee'] } }, 'preprocessing.normalize[0] "fee" is not among the exported columns'],
    ];
    for (const [body, message] of cases) {
      const r = refusals(body);
      expect(r.rest, JSON.stringify(body)).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(r.graphql, JSON.stringify(body)).toMatch(new RegExp(`^config\\.${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
  });

  it('completes a checked body into a job spec: days as seconds once, names in any case, defaults filled', () => {
    const spec = filterExportSpec(
      { format: 'csv', filters: { protocols: ['raydium_amm', 'jupiter_v6', 'raydium_amm'], dateRange: { start: '2025-01-01', end: '2025-01-01' } }, seed: 7 },
      VISIBLE,
    );
    expect(spec).toMatchObject({ format: 'CSV', seed: 7, splits: { train: 1, test: 0, val: 0 }, sampling: null, preprocessing: null });
    expect(spec.filters).toEqual({
      protocols: ['jupiter_v6', 'raydium_amm'],
      dateRange: { start: '2025-01-01', end: '2025-01-01' },
      range: { gte: Date.UTC(2025, 0, 1) / 1000, lte: Date.UTC(2025, 0, 2) / 1000 - 1 },
    });
    expect(sqlExportSpec({ query: 'SELECT 1', sampling: { rate: 0.5 } }).sampling).toMatchObject({ strategy: 'RANDOM', rate: 0.5 });
  });

  it('is what REST documents and what GraphQL takes: the same fields, the rules shown', () => {
    const fields = Object.keys(FILTER_EXPORT.schema.properties).sort();
    expect(Object.keys(filterBody.properties as object).sort()).toEqual(fields);
    expect(Object.keys(sqlBody.properties as object).sort()).toEqual(Object.keys(SQL_EXPORT.schema.properties).sort());
    expect((filterBody['x-cross-field-rules'] as { rule: string }[]).map((r) => r.rule)).toEqual(['sumEquals', 'ordered', 'subsetOf', 'onlyWith']);
    const sdl = buildSchema(
      `scalar BigInt\ninput DateRange { start: String end: String }\ninput TransactionFilters { protocols: [String!] dateRange: DateRange }\ntype Query { a: Int }\n${exportInputSdl()}`,
    );
    expect(Object.keys((sdl.getType('ExportConfig') as GraphQLInputObjectType).getFields()).sort()).toEqual(fields);
  });
});

describe('the SQL bodies and the subscription, declared once', () => {
  it('refuses with SPEC words (400 Invalid query) and reads the format in any case', () => {
    expect(checkSqlBody(SQL_QUERY, { query: 'SELECT 1', format: 'CSV' })).toEqual({ query: 'SELECT 1', format: 'csv' });
    expect(checkSqlBody(SQL_QUERY, { query: 'SELECT 1', format: null })).toEqual({ query: 'SELECT 1', format: 'json' });
    const refused = (decl: typeof SQL_QUERY, body: unknown): string => {
      try {
        checkSqlBody(decl, body);
      } catch (err) {
        return `${(err as AppError).kind.title}: ${(err as AppError).message}`;
      }
      return 'accepted';
    };
    expect(refused(SQL_QUERY, undefined)).toBe('Invalid query: the query must be a non-empty string');
    expect(refused(SQL_QUERY, { query: '  ' })).toBe('Invalid query: the query must be a non-empty string');
    expect(refused(SQL_QUERY, { query: 1 })).toBe('Invalid query: the query must be a non-empty string');
    expect(refused(SQL_QUERY, { query: 'SELECT 1', format: 'xml' })).toBe('Invalid query: format must be "json" or "csv"');
    expect(refused(SQL_QUERY, '"SELECT 1"')).toMatch(/^Invalid query: the body must be a JSON object/);
    expect(refused(SQL_EXECUTION, { query: 'SELECT 1', limit: 1 })).toMatch(/^Invalid query: the body has no field "limit"/);
  });

  it('derives the subscription field from its declaration', () => {
    const sdl = subscriptionFieldsSdl();
    expect(sdl).toMatch(/protocols: \[String!\]/);
    expect(sdl).toMatch(/bucket: ActivityBucketSize = HOUR/);
  });
});
