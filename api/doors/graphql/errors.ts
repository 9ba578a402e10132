// GraphQL's words for the core's errors, and the one place a GraphQL error gets its
// `extensions.code` (from the catalog in core/errors.ts) and a message safe to show.
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, Errors, worded, type ErrorKind, type Wording } from '../../../core/errors.ts';

/** The analytics layer's logical parameters, as GraphQL arguments name them. */
export const GRAPHQL_WORDING: Wording = {
  params: {
    protocol: 'filters.protocols',
    protocols: 'filters.protocols',
    range: 'filters.dateRange',
    cursor: 'pagination.after',
    cursorBefore: 'pagination.before',
    order: 'sort',
    // exportDataset(config) and the export job fields.
    format: 'config.format',
    filters: 'config.filters',
    'filters.protocols': 'config.filters.protocols',
    'filters.dateRange': 'config.filters.dateRange',
    columns: 'config.columns',
    sampling: 'config.sampling',
    'sampling.strategy': 'config.sampling.strategy',
    'sampling.rate': 'config.sampling.rate',
    'sampling.seed': 'config.sampling.seed',
    'sampling.stratifyBy': 'config.sampling.stratifyBy',
    preprocessing: 'config.preprocessing',
    'preprocessing.normalize': 'config.preprocessing.normalize',
    'preprocessing.normalizeMethod': 'config.preprocessing.normalizeMethod',
    'preprocessing.oneHotEncode': 'config.preprocessing.oneHotEncode',
    splits: 'config.splits',
    seed: 'config.seed',
    job: 'id',
  },
  hints: { protocols: 'query { protocols } lists the available ones', coarserBucket: 'a coarser bucketBy (DAY, WEEK, MONTH)' },
};

/** A GraphQL error carrying a catalog kind (its code) and a message safe to show. */
export function graphqlError(kind: ErrorKind, message: string, options: { path?: readonly (string | number)[] } = {}): GraphQLError {
  return new GraphQLError(message, { path: options.path, extensions: { code: kind.graphql } });
}

/** An error thrown while answering a field, as a GraphQL error at that field. */
export function fieldError(err: unknown, path: readonly (string | number)[]): GraphQLError {
  if (err instanceof GraphQLError) return err;
  return new GraphQLError(err instanceof Error ? err.message : String(err), { path, originalError: err instanceof Error ? err : undefined });
}

/** Arguments some shared services name bare (the export service's "first must be ..."), as GraphQL writes them. */
const AS_WRITTEN: Readonly<Record<string, string>> = {
  first: 'pagination.first',
  after: 'pagination.after',
  last: 'pagination.last',
  before: 'pagination.before',
};

/** A message that starts with a bare argument name, with the name as the request wrote it. */
function asWritten(message: string, field: string | undefined): string {
  const written = field === undefined ? undefined : AS_WRITTEN[field];
  return written !== undefined && message.startsWith(`${field} `) ? `${written}${message.slice(field!.length)}` : message;
}

/**
 * The wire form of one error, for queries, mutations and subscriptions alike (`words`: how
 * the operation names the core's parameters): catalog errors worded for GraphQL with their
 * code; errors of the GraphQL language itself (syntax, validation, variable coercion) keep
 * their message and are BAD_USER_INPUT unless a rule set a code (its other extensions
 * kept); anything else is an internal error whose cause is logged, never shown.
 */
export function formatError(e: GraphQLError, log: (err: unknown) => void, words: Wording = GRAPHQL_WORDING): GraphQLFormattedError {
  const orig = e.originalError;
  const place = { ...(e.locations ? { locations: e.locations } : {}), ...(e.path ? { path: e.path } : {}) };
  if (orig instanceof AppError) {
    const w = worded(orig, words) as AppError;
    if (w.kind.http >= 500) log(orig);
    const message = w.kind.http >= 500 ? 'Internal error' : asWritten(w.message, w.field);
    return { message, ...place, extensions: { code: w.kind.graphql } };
  }
  if (orig !== undefined && !(orig instanceof GraphQLError)) {
    log(orig);
    return { message: 'Internal error', ...place, extensions: { code: Errors.internal.graphql } };
  }
  const own = e.extensions?.code;
  return { message: e.message, ...place, extensions: typeof own === 'string' ? { ...e.extensions, code: own } : { code: Errors.invalidParams.graphql } };
}
