// Types of the part of graphql-helix 1.13 this adapter uses. The package ships typings
// (dist/*.d.ts) that its "exports" map hides from NodeNext resolution, so they are restated
// here, narrowed to what graphql-routes.ts calls.
declare module 'graphql-helix' {
  import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';

  export class HttpError extends Error {
    status: number;
    headers?: { name: string; value: string }[];
    graphqlErrors?: readonly Error[];
    constructor(status: number, message: string, details?: { headers?: { name: string; value: string }[]; graphqlErrors?: readonly Error[] });
  }

  export interface ProcessRequestOptions<TContext> {
    request: { body?: unknown; headers: Record<string, string | string[] | undefined>; method: string; query: unknown };
    query?: string | DocumentNode;
    operationName?: string;
    variables?: string | Record<string, unknown>;
    extensions?: Record<string, unknown>;
    schema: GraphQLSchema;
    parse?: (source: string) => DocumentNode;
    validate?: (schema: GraphQLSchema, document: DocumentNode, rules: readonly ValidationRule[]) => readonly GraphQLError[];
    validationRules?: readonly ValidationRule[];
    execute?: (args: {
      schema: GraphQLSchema;
      document: DocumentNode;
      rootValue: unknown;
      contextValue: unknown;
      variableValues?: { readonly [name: string]: unknown };
      operationName?: string;
    }) => Promise<ExecutionResult>;
    contextFactory?: () => TContext | Promise<TContext>;
  }

  export type ProcessRequestResult =
    | { type: 'RESPONSE'; status: number; headers: { name: string; value: string }[]; payload: ExecutionResult }
    | { type: 'MULTIPART_RESPONSE' | 'PUSH'; subscribe(onResult: (result: ExecutionResult) => void): Promise<void>; unsubscribe(): void };

  export function processRequest<TContext = object>(options: ProcessRequestOptions<TContext>): Promise<ProcessRequestResult>;
}
