// The limits home is core/limits/, one file per concern; this index re-exports them all for
// the files that still import it (the request boundary's, until they import their concern's
// file). New code imports the concern's file.
export * from './limits/access.ts';
export * from './limits/answers.ts';
export * from './limits/batches.ts';
export * from './limits/dashboard.ts';
export * from './limits/exports.ts';
export * from './limits/graphql.ts';
export * from './limits/http.ts';
export * from './limits/ingest.ts';
export * from './limits/mcp.ts';
export * from './limits/metrics.ts';
export * from './limits/process.ts';
export * from './limits/questions.ts';
export * from './limits/sql.ts';
export * from './limits/streams.ts';
export * from './limits/warehouse.ts';
