// Limits on the shape of a document, as validation rules. A rule reports through the
// validation context (never throws: helix turns a throw into a 500), so an over-limit
// document is a request error like any other invalid document (400 under
// application/graphql-response+json) with extensions.code QUERY_TOO_COMPLEX.
import {
  GraphQLError,
  Kind,
  MaxIntrospectionDepthRule,
  type ASTNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { Errors } from '../../../core/errors.ts';
import { GRAPHQL_MAX_ALIASES, GRAPHQL_MAX_DEPTH } from '../../../core/limits/graphql.ts';

const tooComplex = (message: string, node: ASTNode): GraphQLError =>
  new GraphQLError(message, { nodes: [node], extensions: { code: Errors.queryTooComplex.graphql } });

/**
 * Field nesting of each operation at most `max`. Introspection fields (`__schema`, `__type`)
 * are not descended into: GraphiQL's schema query is deep and reads no data. Each fragment's
 * depth is computed once (a document reusing fragments cannot make this exponential), and a
 * fragment met again on its own path (a cycle, refused by another rule) counts as nothing.
 */
export function depthLimit(max = GRAPHQL_MAX_DEPTH): ValidationRule {
  return (context: ValidationContext) => {
    const memo = new Map<string, number>();
    const open = new Set<string>();
    const fragmentDepth = (f: FragmentDefinitionNode): number => {
      const name = f.name.value;
      const known = memo.get(name);
      if (known !== undefined) return known;
      if (open.has(name)) return 0;
      open.add(name);
      const d = depth(f.selectionSet);
      open.delete(name);
      memo.set(name, d);
      return d;
    };
    const depth = (set: SelectionSetNode | undefined): number => {
      if (set === undefined) return 0;
      let deepest = 0;
      for (const s of set.selections) {
        let d = 0;
        if (s.kind === Kind.FIELD) d = s.name.value.startsWith('__') ? 1 : 1 + depth(s.selectionSet);
        else if (s.kind === Kind.INLINE_FRAGMENT) d = depth(s.selectionSet);
        else {
          const f = context.getFragment(s.name.value);
          d = f ? fragmentDepth(f) : 0;
        }
        if (d > deepest) deepest = d;
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const d = depth(node.selectionSet);
        if (d > max) context.reportError(tooComplex(`the operation nests fields ${d} deep; at most ${max} levels are allowed (introspection excepted)`, node));
      },
    };
  };
}

/** At most `max` aliased fields in the document. */
export function aliasLimit(max = GRAPHQL_MAX_ALIASES): ValidationRule {
  return (context: ValidationContext) => {
    let count = 0;
    let reported = false;
    return {
      Field(node) {
        if (node.alias === undefined) return;
        count += 1;
        if (count > max && !reported) {
          reported = true;
          context.reportError(tooComplex(`the document uses more than ${max} aliases; send fewer fields per request`, node));
        }
      },
    };
  };
}

/**
 * graphql-js's bound on introspection nesting (`fields`, `interfaces`, `possibleTypes`,
 * `inputFields` at most 3 deep, which keeps a deep introspection query from growing its answer
 * exponentially), reporting as a limit: QUERY_TOO_COMPLEX like the other limits, rather than
 * BAD_USER_INPUT, which it would be without a code.
 */
export const introspectionDepthLimit: ValidationRule = (context: ValidationContext) =>
  MaxIntrospectionDepthRule(
    Object.create(context, {
      reportError: {
        value: (e: GraphQLError) =>
          context.reportError(
            tooComplex(
              `${e.message}: introspection nests fields, interfaces, possibleTypes and inputFields at most 3 levels deep`,
              e.nodes?.[0] ?? context.getDocument(),
            ),
          ),
      },
    }) as ValidationContext,
  );
