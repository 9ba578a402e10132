// Relay-style connections: the pagination argument (forward with first/after, backward with
// last/before), which of the connection's costly parts the document selects, and the
// connection object the schema's types read (edges, nodes, pageInfo, totalCount).
import {
  getDirectiveValues, GraphQLIncludeDirective, GraphQLSkipDirective, Kind,
  type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode,
} from 'graphql';
import { invalidParams } from '../../core/errors.ts';
import { GRAPHQL_DEFAULT_FIRST, GRAPHQL_MAX_FIRST, PAGE_TOKEN_MAX_CHARS } from '../../core/limits.ts';
import type { ConnectionPage, ConnectionWants } from '../analytics/connection.ts';
import type { PageDirection } from '../analytics/page-token.ts';

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
 * The page a pagination argument asks for. Relay's two ways, each whole: first/after
 * (forward) or last/before (backward); mixing them is refused, as is first with last
 * (Relay advises against it and it has no single meaning).
 */
export function pageOf(p: PaginationArg | null | undefined): PageAsk {
  const { first, after, last, before } = p ?? {};
  if (present(first) && present(last)) {
    throw invalidParams('pagination.first and pagination.last cannot be used together: page forward with first (and after), or backward with last (and before)', 'pagination.last');
  }
  if (present(after) && present(before)) {
    throw invalidParams('pagination.after and pagination.before cannot be used together: page forward with first/after, or backward with last/before', 'pagination.before');
  }
  if (present(first) && present(before)) throw invalidParams('pagination.before pages backward: use it with pagination.last, not pagination.first', 'pagination.before');
  if (present(last) && present(after)) throw invalidParams('pagination.after pages forward: use it with pagination.first, not pagination.last', 'pagination.after');
  const direction: PageDirection = present(last) || present(before) ? 'backward' : 'forward';
  const [sizeName, cursorName, size, cursor] = direction === 'forward'
    ? ['pagination.first', 'pagination.after', first, after] as const
    : ['pagination.last', 'pagination.before', last, before] as const;
  const limit = size ?? GRAPHQL_DEFAULT_FIRST;
  if (limit < 1 || limit > GRAPHQL_MAX_FIRST) {
    throw invalidParams(`${sizeName} must be between 1 and ${GRAPHQL_MAX_FIRST} (got ${limit}); page on with ${cursorName}`, sizeName);
  }
  if (present(cursor) && (cursor.length === 0 || cursor.length > PAGE_TOKEN_MAX_CHARS)) {
    throw invalidParams(`${cursorName} is not a cursor this service issued (at most ${PAGE_TOKEN_MAX_CHARS} characters); pass back an edge cursor, pageInfo.startCursor or pageInfo.endCursor unchanged`, cursorName);
  }
  return { limit, direction, ...(present(cursor) ? { cursor } : {}) };
}

/** The connection fields a document selects that cost reads of their own. */
export interface ConnectionSelection {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  totalCount: boolean;
}

const COSTLY = new Set(['hasPreviousPage', 'hasNextPage', 'totalCount', 'totalCountIsEstimate']);

/**
 * Which costly fields a top-level connection field selects, after fragments and
 * @skip/@include, over every selection of its response key (GraphQL merges them).
 */
export function connectionSelection(document: DocumentNode, operation: OperationDefinitionNode, responseKey: string, variables: Record<string, unknown>): ConnectionSelection {
  const fragments = new Map<string, FragmentDefinitionNode>(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const found = new Set<string>();
  const included = (node: Parameters<typeof getDirectiveValues>[1]): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true && getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
  // Each field at `depth`: the root's fields with this key (-1), the connection's own (0), pageInfo's (1).
  const visit = (set: SelectionSetNode | undefined, depth: number, seen: Set<string>): void => {
    for (const s of set?.selections ?? []) {
      if (!included(s)) continue;
      if (s.kind === Kind.FIELD) {
        const name = s.name.value;
        if (depth === -1) {
          if ((s.alias?.value ?? name) === responseKey) visit(s.selectionSet, 0, new Set());
        } else {
          if (COSTLY.has(name)) found.add(name);
          if (depth === 0 && name === 'pageInfo') visit(s.selectionSet, 1, seen);
        }
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet, depth, seen);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        visit(fragments.get(s.name.value)?.selectionSet, depth, seen);
      }
    }
  };
  visit(operation.selectionSet, -1, new Set());
  return { hasPreviousPage: found.has('hasPreviousPage'), hasNextPage: found.has('hasNextPage'), totalCount: found.has('totalCount') || found.has('totalCountIsEstimate') };
}

/** What the analytics layer reads for a page going `direction`: the flag of the end it starts from is a read of its own. */
export function wantsOf(selection: ConnectionSelection | undefined, direction: PageDirection): ConnectionWants {
  if (selection === undefined) return { boundary: false, totalCount: false };
  return { boundary: direction === 'forward' ? selection.hasPreviousPage : selection.hasNextPage, totalCount: selection.totalCount };
}

/** The connection object of the schema (edges, nodes, pageInfo, totalCount, totalCountIsEstimate). */
export function connectionOf<N, O>(page: ConnectionPage<N>, node: (n: N) => O) {
  const edges = page.edges.map((e) => ({ node: node(e.node), cursor: e.cursor }));
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasPreviousPage: page.hasPreviousPage,
      hasNextPage: page.hasNextPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: page.totalCount?.value ?? null,
    totalCountIsEstimate: page.totalCount?.estimated ?? false,
  };
}
