// What a connection page (GraphQL's Relay-style connections) carries besides its items:
// whether items lie before and after it, and how many the whole listing holds. Record
// listings (record-connection.ts) and group pages (group-pages.ts) answer the same shape.
import type { PageDirection } from './page-token.ts';

/**
 * The extras a request asks for; each costs statements of its own, so only what is asked
 * is read. `boundary`: whether items lie beyond the end the page starts from (hasPreviousPage
 * of a forward page after a cursor, hasNextPage of a backward page before one); the far end
 * is known from the page's own read (one item past it).
 */
export interface ConnectionWants {
  boundary: boolean;
  totalCount: boolean;
}

export const NO_EXTRAS: ConnectionWants = { boundary: false, totalCount: false };

/** Which of a connection's costly fields a request selects (GraphQL reads them off its document). */
export interface SelectedExtras {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  totalCount: boolean;
}

/** What is read for a page going `direction`: the flag of the end it starts from is a read of its own. */
export function wantsOf(selection: SelectedExtras | undefined, direction: PageDirection): ConnectionWants {
  if (selection === undefined) return NO_EXTRAS;
  return { boundary: direction === 'forward' ? selection.hasPreviousPage : selection.hasNextPage, totalCount: selection.totalCount };
}

/**
 * How many items the listing holds, whatever the page. `estimated` when counting exactly
 * would pass the plan's budget and a cheaper figure was given instead (docs/graphql.md
 * states the rule).
 */
export interface TotalCount {
  value: number;
  estimated: boolean;
}

export interface ConnectionPage<N> {
  /** In the listing's order, whichever way the page was read. */
  edges: { node: N; cursor: string }[];
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  totalCount?: TotalCount;
}

/**
 * The two flags of a page read in `direction`: `more` is whether items lie past its far
 * end (read with it), `beyond` whether items lie past the end it started from (a cursor's
 * side; false without a cursor: the page starts at the listing's edge).
 */
export function pageFlags(direction: PageDirection, more: boolean, beyond: boolean): Pick<ConnectionPage<unknown>, 'hasPreviousPage' | 'hasNextPage'> {
  return direction === 'forward' ? { hasNextPage: more, hasPreviousPage: beyond } : { hasPreviousPage: more, hasNextPage: beyond };
}
