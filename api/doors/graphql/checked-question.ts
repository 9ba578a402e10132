// An open question's request as the one check gave it (api/catalog/open-questions.ts), read
// as the facade's presets take it: its filters as GroupFilters (the outcome as `status`,
// whichever of status and success was given: the request's rule holds them to agree) and its
// page as a size, a cursor and a way. Nothing is checked here: the request was. (question-args.ts
// maps GraphQL's wire shape onto the request; this reads the request once checked.)
import { GRAPHQL_DEFAULT_FIRST } from '../../../core/limits/graphql.ts';
import { QUESTION_RANGE_MAX } from '../../../core/limits/questions.ts';
import type { CheckedRequest } from '../../../core/request-check.ts';
import type { PageDirection } from '../../analytics/paging/page-token.ts';
import type { GroupFilters } from '../../analytics/presets/group-pages.ts';
import type { Bounds, RangeFilter } from '../../analytics/question/model.ts';

/** The record columns a request may range over, by the question model's names. */
const RANGE_FILTERS = Object.keys(QUESTION_RANGE_MAX) as RangeFilter[];

/** An open question's request as the one check gave it: its protocols resolved, its values by the request's names. */
export type CheckedQuestion = CheckedRequest &
  Partial<Record<RangeFilter, Bounds>> & {
    instructionTypes?: string[];
    programIds?: string[];
    signatures?: string[];
    logMessage?: string;
    status?: 'SUCCEEDED' | 'FAILED' | 'ALL';
    success?: boolean;
    page?: { first?: number; after?: string; last?: number; before?: string };
  };

/** The filters of an aggregate from its checked request: protocols as asked, the range, the lists and the record-level ones. */
export function groupFilters(c: CheckedQuestion): GroupFilters {
  const { protocolsAsked: protocols, range, instructionTypes, programIds, signatures, logMessage } = c;
  const ranges: Partial<Record<RangeFilter, Bounds>> = Object.fromEntries(RANGE_FILTERS.flatMap((r) => (c[r] === undefined ? [] : [[r, c[r]]])));
  // success and status are two wire names of the one status filter; they say one thing (the
  // request's rule `agrees`): the one given (ALL: no filter).
  const asked = c.status === 'SUCCEEDED' ? 'succeeded' : c.status === 'FAILED' ? 'failed' : undefined;
  const status = c.success === undefined ? asked : c.success ? 'succeeded' : 'failed';
  return {
    range,
    ...(protocols ? { protocols } : {}),
    ...(instructionTypes ? { instructionTypes } : {}),
    ...(programIds ? { programIds } : {}),
    ...(signatures ? { signatures } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(Object.keys(ranges).length > 0 ? { ranges } : {}),
    ...(logMessage !== undefined ? { logMessage } : {}),
  };
}

/** A page as asked: its size, the cursor it starts from, and which way it goes. */
export interface PageAsk {
  limit: number;
  cursor?: string;
  direction: PageDirection;
}

/** The page a checked request asks for (its way whole, by the request's rules): backward with last/before, else forward. */
export function pageOf(c: CheckedQuestion): PageAsk {
  const { first, after, last, before } = c.page ?? {};
  const backward = last !== undefined || before !== undefined;
  const cursor = backward ? before : after;
  return {
    limit: (backward ? last : first) ?? GRAPHQL_DEFAULT_FIRST,
    direction: backward ? 'backward' : 'forward',
    ...(cursor !== undefined ? { cursor } : {}),
  };
}
