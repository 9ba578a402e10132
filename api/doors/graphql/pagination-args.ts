// The pagination argument of connections (GraphQL's Relay-style `pagination`): forward with
// first/after, or backward with last/before, each way whole. Checked here, with the
// argument's names, for every field that pages (argument checks live in the catalog).
import { invalidParams } from '../../../core/errors.ts';
import { GRAPHQL_DEFAULT_FIRST, GRAPHQL_MAX_FIRST } from '../../../core/limits/graphql.ts';
import { PAGE_TOKEN_MAX_CHARS } from '../../../core/limits/questions.ts';
import type { PageDirection } from '../../analytics/paging/page-token.ts';

export interface PaginationArg {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A page as asked: its size, the cursor it starts from, and which way it goes. */
export interface PageAsk {
  limit: number;
  cursor?: string;
  direction: PageDirection;
}

const present = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

/**
 * Which way a pagination argument pages. Relay's two ways, each whole: first/after
 * (forward) or last/before (backward); mixing them is refused, as is first with last
 * (Relay advises against it and it has no single meaning).
 */
export function directionOf(p: PaginationArg | null | undefined): PageDirection {
  const { first, after, last, before } = p ?? {};
  if (present(first) && present(last)) {
    throw invalidParams(
      'pagination.first and pagination.last cannot be used together: page forward with first (and after), or backward with last (and before)',
      'pagination.last',
    );
  }
  if (present(after) && present(before)) {
    throw invalidParams(
      'pagination.after and pagination.before cannot be used together: page forward with first/after, or backward with last/before',
      'pagination.before',
    );
  }
  if (present(first) && present(before))
    throw invalidParams('pagination.before pages backward: use it with pagination.last, not pagination.first', 'pagination.before');
  if (present(last) && present(after))
    throw invalidParams('pagination.after pages forward: use it with pagination.first, not pagination.last', 'pagination.after');
  return present(last) || present(before) ? 'backward' : 'forward';
}

/** The page a pagination argument asks for, its size and cursor checked (connections over the engine). */
export function pageOf(p: PaginationArg | null | undefined): PageAsk {
  const { first, after, last, before } = p ?? {};
  const direction = directionOf(p);
  const [sizeName, cursorName, size, cursor] =
    direction === 'forward'
      ? (['pagination.first', 'pagination.after', first, after] as const)
      : (['pagination.last', 'pagination.before', last, before] as const);
  const limit = size ?? GRAPHQL_DEFAULT_FIRST;
  if (limit < 1 || limit > GRAPHQL_MAX_FIRST) {
    throw invalidParams(`${sizeName} must be between 1 and ${GRAPHQL_MAX_FIRST} (got ${limit}); page on with ${cursorName}`, sizeName);
  }
  if (present(cursor) && (cursor.length === 0 || cursor.length > PAGE_TOKEN_MAX_CHARS)) {
    throw invalidParams(
      `${cursorName} is not a cursor this service issued (at most ${PAGE_TOKEN_MAX_CHARS} characters); pass back an edge cursor, pageInfo.startCursor or pageInfo.endCursor unchanged`,
      cursorName,
    );
  }
  return { limit, direction, ...(present(cursor) ? { cursor } : {}) };
}
