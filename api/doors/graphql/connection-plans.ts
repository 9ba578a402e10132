// Relay-style connections: which of the connection's costly parts the document selects, and
// the connection object the schema's types read (edges, nodes, pageInfo, totalCount). The
// pagination argument itself is the open questions' declared page (api/catalog/open-questions.ts).
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ConnectionPage, SelectedExtras } from '../../analytics/paging/connection.ts';

/** The connection fields a document selects that cost reads of their own (analytics/paging/connection.ts turns them into reads). */
export type ConnectionSelection = SelectedExtras;

const COSTLY = new Set(['hasPreviousPage', 'hasNextPage', 'totalCount', 'totalCountIsEstimate']);

/**
 * Which costly fields a top-level connection field selects, after fragments and
 * @skip/@include, over every selection of its response key (GraphQL merges them).
 */
export function connectionSelection(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  responseKey: string,
  variables: Record<string, unknown>,
): ConnectionSelection {
  const fragments = new Map<string, FragmentDefinitionNode>(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
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
  return {
    hasPreviousPage: found.has('hasPreviousPage'),
    hasNextPage: found.has('hasNextPage'),
    totalCount: found.has('totalCount') || found.has('totalCountIsEstimate'),
  };
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
