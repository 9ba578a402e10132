// Route schemas of the export routes, for the OpenAPI document (/api/v1/openapi.json) and
// the contract fuzzer that reads it. Bodies and queries are checked by export-config.ts
// (so that errors name the field in this interface's words), not by these schemas.
import { EXPORT_COLUMNS, EXPORT_FORMATS, SPLIT_NAMES } from './export-config.ts';
import { JOB_STATUSES } from './job-store.ts';

const TEXT: Record<number, string> = {
  400: 'Invalid configuration or query (the message names the field)',
  401: 'API key missing',
  403: 'API key invalid, inactive or revoked; for a signed link: forged, expired, or its key revoked',
  404: 'No such job or file for this API key (another key\'s job is not found either)',
  413: 'Request body too large',
  414: 'A path parameter is too long',
  415: 'Body is not application/json',
  416: 'Range past the end of the file',
  429: 'Rate limit, or the plan\'s cap of queued and running export jobs (Retry-After)',
};
export const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, { description: TEXT[c] ?? 'Error', $ref: 'ErrorBody#' }]));

const nullable = (type: string) => ({ type: [type, 'null'] });
const link = { type: 'object', properties: { url: { type: 'string' }, path: { type: 'string' } } } as const;

export const jobSchema = {
  type: 'object',
  required: ['id', 'status', 'progress'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    progress: { type: 'integer', minimum: 0, maximum: 100, description: 'Rows written over rows planned, 0-100; never backwards' },
    kind: { type: 'string', enum: ['filters', 'sql'] },
    format: { type: 'string', enum: [...EXPORT_FORMATS] },
    rowsWritten: { type: 'integer' },
    rowsTotal: nullable('integer'),
    createdAt: { type: 'string' },
    startedAt: nullable('string'),
    finishedAt: nullable('string'),
    expiresAt: nullable('string'),
    error: { ...nullable('string'), description: 'Why a FAILED job failed' },
    seeds: { type: 'object', properties: { split: { type: 'integer' }, sampling: nullable('integer') } },
    files: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' }, split: { type: 'string', enum: [...SPLIT_NAMES] }, rows: { type: 'integer' },
          bytes: { type: 'integer' }, sha256: { type: 'string' },
          url: { type: 'string', description: 'Signed link (no API key needed), minted at this read' },
          path: { type: 'string', description: 'Authenticated download path' },
        },
      },
    },
    manifest: { type: ['object', 'null'], properties: link.properties },
    card: { type: ['object', 'null'], properties: link.properties },
    linkExpiresAt: nullable('string'),
  },
} as const;

const output = {
  format: { type: 'string', enum: [...EXPORT_FORMATS], default: 'PARQUET' },
  sampling: {
    type: 'object',
    properties: { strategy: { type: 'string', enum: ['RANDOM'] }, rate: { type: 'number', minimum: 0, maximum: 1 }, seed: { type: 'integer', minimum: 0, maximum: 4294967295 } },
  },
  splits: {
    type: 'object',
    description: 'Fractions summing to 1 (within 1e-9); by a hash of the signature',
    properties: Object.fromEntries(SPLIT_NAMES.map((s) => [s, { type: 'number', minimum: 0, maximum: 1 }])),
  },
  seed: { type: 'integer', minimum: 0, maximum: 4294967295, description: 'Split seed; drawn and reported when absent' },
};

export const filterBody = {
  type: 'object',
  properties: {
    ...output,
    filters: {
      type: 'object',
      properties: {
        protocols: { type: 'array', items: { type: 'string' }, minItems: 1 },
        dateRange: { type: 'object', properties: { start: { type: 'string', format: 'date' }, end: { type: 'string', format: 'date' } } },
      },
    },
    columns: { type: 'array', items: { type: 'string', enum: [...EXPORT_COLUMNS] }, minItems: 1 },
  },
} as const;

export const sqlBody = {
  type: 'object',
  required: ['query'],
  properties: { query: { type: 'string', description: 'One read-only SELECT, as for POST /v1/query; no LIMIT is added' }, ...output },
} as const;

export const pageSchema = {
  type: 'object',
  properties: { jobs: { type: 'array', items: jobSchema }, hasNextPage: { type: 'boolean' }, endCursor: nullable('string') },
} as const;

const FILE_TYPES = ['application/vnd.apache.parquet', 'text/csv; charset=utf-8', 'application/x-ndjson; charset=utf-8', 'application/json; charset=utf-8', 'text/markdown; charset=utf-8'];
const fileContent = Object.fromEntries(FILE_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]));

/** Answers of the download routes: the file, a part of it, not modified, or an error. */
export const fileResponses = {
  200: { description: 'The file (ETag: its sha256; Content-Disposition names it)', content: fileContent },
  206: { description: 'The requested range (Range: bytes=a-b; If-Range: the ETag)', content: fileContent },
  304: { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' },
};
