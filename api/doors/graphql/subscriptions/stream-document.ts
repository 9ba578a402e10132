// The document of a subscription, checked before it runs (stream-route.ts): its size, the
// fields it selects, the operation it names, and graphql-js's validation; then subscribed.
// Problems are the document's, so they are answered inside the stream (one `next` event
// with `errors`), as the graphql-sse protocol asks.
import {
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  subscribe,
  validate,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { STREAM_MAX_TOKENS, STREAM_QUOTED_NAME_MAX_CHARS } from '../../../../core/limits/streams.ts';
import type { Params } from '../request-params.ts';
import { userError, type StreamContext } from './schema.ts';

/** A subscription's events, or the one result (errors) that answers it instead. */
export type Prepared = { kind: 'stream'; events: AsyncIterator<ExecutionResult> } | { kind: 'result'; result: ExecutionResult };

export interface DocumentLimits {
  maxDocumentChars: number;
  maxSelections: number;
}

/** Fields selected anywhere in the document (aliases and fragments included): each is sent with every event. */
function countSelections(doc: DocumentNode): number {
  let n = 0;
  visit(doc, { [Kind.FIELD]: () => void (n += 1) });
  return n;
}

/** Do @skip or @include decide on the root field (directly, or on a fragment holding it)? */
function rootHasSkipOrInclude(doc: DocumentNode, set: SelectionSetNode, seen = new Set<string>()): boolean {
  for (const sel of set.selections) {
    if (sel.directives?.some((d) => d.name.value === 'skip' || d.name.value === 'include')) return true;
    if (sel.kind === Kind.INLINE_FRAGMENT && rootHasSkipOrInclude(doc, sel.selectionSet, seen)) return true;
    if (sel.kind === Kind.FRAGMENT_SPREAD && !seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      const frag = doc.definitions.find((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === sel.name.value);
      if (frag && rootHasSkipOrInclude(doc, frag.selectionSet, seen)) return true;
    }
  }
  return false;
}

/** Check the subscription document of `params` and subscribe to it with `root` as the root value. */
export async function prepareSubscription(
  params: Params,
  ctx: StreamContext,
  run: { schema: GraphQLSchema; root: unknown; limits: DocumentLimits },
): Promise<Prepared> {
  const fail = (...errors: GraphQLError[]): Prepared => ({ kind: 'result', result: { errors } });
  const { schema, limits } = run;
  if (params.query.length > limits.maxDocumentChars) {
    return fail(userError(`the document is ${params.query.length} characters; at most ${limits.maxDocumentChars} are allowed on /graphql/stream`));
  }
  let document: DocumentNode;
  try {
    // A token budget bounds parsing work whatever the document holds.
    document = parse(params.query, { maxTokens: STREAM_MAX_TOKENS });
  } catch (err) {
    if (err instanceof GraphQLError) return fail(err);
    throw err;
  }
  // Counted before validation, whose cost grows with the square of repeated fields.
  const fields = countSelections(document);
  if (fields > limits.maxSelections) {
    return fail(userError(`the subscription selects ${fields} fields; at most ${limits.maxSelections} are allowed (each is sent with every event)`));
  }
  const op = getOperationAST(document, params.operationName);
  if (op === null || op === undefined) {
    return fail(
      userError(
        params.operationName === undefined
          ? 'the document holds several operations: name the one to run in "operationName"'
          : `no operation named ${JSON.stringify(params.operationName.slice(0, STREAM_QUOTED_NAME_MAX_CHARS))} in the document`,
      ),
    );
  }
  if (op.operation !== 'subscription') {
    return fail(userError(`/graphql/stream serves subscriptions only; send ${op.operation === 'query' ? 'queries' : 'mutations'} to POST /graphql`));
  }
  // graphql 16 fails (a TypeError at execution, or a throw from its own validation rule
  // when the condition is a variable) when @skip/@include decide on a subscription's root
  // field; the spec's newer editions forbid them there, and so does this route. Checked
  // before validation for that reason.
  if (rootHasSkipOrInclude(document, op.selectionSet)) {
    return fail(userError('@skip and @include are not allowed on the root field of a subscription'));
  }
  let invalid: readonly GraphQLError[];
  try {
    invalid = validate(schema, document, undefined, { maxErrors: 10 });
  } catch (err) {
    // A validation rule that throws rather than reports (as above) is still the document's fault.
    if (err instanceof GraphQLError) return fail(err);
    throw err;
  }
  if (invalid.length > 0) return fail(...invalid);
  const result = await subscribe({
    schema,
    document,
    rootValue: run.root,
    contextValue: ctx,
    variableValues: params.variables,
    operationName: params.operationName,
  });
  if (Symbol.asyncIterator in result) return { kind: 'stream', events: result[Symbol.asyncIterator]() };
  return { kind: 'result', result };
}
