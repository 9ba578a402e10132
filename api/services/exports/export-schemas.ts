// Route schemas of the export routes, for the OpenAPI document (/api/v1/openapi.json) and
// the contract fuzzer that reads it. The creation bodies are derived from their request
// declarations (export-request.ts), which the service checks once (checkRequest).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { EXPORT_LIST_DEFAULT, EXPORT_LIST_MAX, PROGRESS_MAX_PERCENT } from '../../../core/limits/exports.ts';
import { PAGE_TOKEN_MAX_CHARS } from '../../../core/limits/questions.ts';
import type { RequestDecl } from '../../../core/request-check.ts';
import { rulesDoc } from '../../../core/request-rules.ts';
import { Int64, pathParam } from '../../../core/vocabulary/primitives.ts';
import { EXPORT_FORMATS, SPLIT_NAMES } from './export-config.ts';
import { FILTER_EXPORT, SQL_EXPORT } from './export-request.ts';
import { JOB_STATUSES } from './job-store.ts';
import { LINK_EXPIRES_PATTERN, LINK_SIG_PATTERN } from './download-links.ts';

/** An API key's id as the key store writes it (a UUID), lowercase. */
const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

const TEXT: Record<number, string> = {
  400: 'Invalid configuration or query (the message names the field)',
  401: 'API key missing',
  403: 'API key invalid, inactive or revoked; for a signed link: forged, expired, or its key revoked',
  404: "No such job or file for this API key (another key's job is not found either)",
  413: 'Request body too large',
  414: 'A path parameter longer than its maxLength, or a URI over the limit',
  415: 'Body is not application/json, or sent with a Content-Encoding other than identity',
  416: 'Range past the end of the file',
  429: "Rate limit, or the plan's cap of queued and running export jobs (Retry-After)",
};
export const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, { description: TEXT[c] ?? 'Error', $ref: 'ErrorBody#' }]));

const nullable = (type: string) => ({ type: [type, 'null'] });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Link = Type.Object({ url: Type.String(), path: Type.String() });
/** A string enum as one named schema ({enum, title}), not a union of constants: generated clients
 *  make one enum class of it (a union gave openapi-python-client one class per value). */
const NamedEnum = <const V extends readonly string[]>(title: string, values: V) => Type.Unsafe<V[number]>({ type: 'string', enum: [...values], title });

/** A job's file as every interface shows it: the stored facts plus its two ways to download. */
export const ExportFileViewSchema = Type.Object({
  name: Type.String(),
  split: NamedEnum('ExportSplit', SPLIT_NAMES),
  rows: Int64(),
  bytes: Int64({ description: 'File size in bytes' }),
  sha256: Type.String(),
  url: Type.String({ description: 'Signed link (no API key needed), minted at this read' }),
  path: Type.String({ description: 'Authenticated download path' }),
});
export type ExportFileView = Static<typeof ExportFileViewSchema>;

/** A job as every interface shows it: the REST response schema and the service's type, one definition. */
export const ExportJobViewSchema = Type.Object({
  id: Type.String(),
  status: NamedEnum('ExportJobStatus', JOB_STATUSES),
  progress: Type.Integer({ minimum: 0, maximum: PROGRESS_MAX_PERCENT, description: 'Rows written over rows planned, 0-100; never backwards' }),
  kind: NamedEnum('ExportJobKind', ['filters', 'sql'] as const),
  format: NamedEnum('ExportFormat', EXPORT_FORMATS),
  rowsWritten: Int64(),
  rowsTotal: Nullable(Int64()),
  createdAt: Type.String(),
  startedAt: Nullable(Type.String()),
  finishedAt: Nullable(Type.String()),
  expiresAt: Nullable(Type.String()),
  error: Nullable(Type.String({ description: 'Why a FAILED job failed' })),
  rowCount: Nullable(Int64({ description: 'Rows in the files of a COMPLETED (or since EXPIRED) job; null before' })),
  fileSize: Nullable(Int64({ description: 'Bytes of the data files of a COMPLETED job; null otherwise' })),
  downloadUrl: Nullable(
    Type.String({
      description: 'Signed link of a COMPLETED job: its data file when it wrote one, else manifest.json (which lists every file); null otherwise',
    }),
  ),
  completedAt: Nullable(Type.String({ description: 'When the job COMPLETED (also for an EXPIRED job); null otherwise' })),
  seeds: Type.Object({
    split: Int64({ description: 'The split seed, 0 to 2^32-1 (drawn when the job was created without one)' }),
    sampling: Nullable(Int64()),
  }),
  /** Data files (COMPLETED jobs), then manifest.json and README.md as `manifest` and `card`. */
  files: Type.Array(ExportFileViewSchema),
  manifest: Nullable(Link),
  card: Nullable(Link),
  linkExpiresAt: Nullable(Type.String()),
});
export type ExportJobView = Static<typeof ExportJobViewSchema>;
export const jobSchema = ExportJobViewSchema;

/** A declared body as REST documents it: the declaration's schema, every optional field also
 *  null (which means absent), and its cross-field rules. */
function restBody(decl: RequestDecl): Record<string, unknown> {
  const nullable = (s: TSchema, optional: boolean): TSchema => {
    const out: Record<string, unknown> = { ...s };
    if (s.type === 'object' && s.properties !== undefined) {
      const required = new Set<string>((s.required as string[] | undefined) ?? []);
      out.properties = Object.fromEntries(Object.entries(s.properties as Record<string, TSchema>).map(([k, p]) => [k, nullable(p, !required.has(k))]));
    }
    if (optional && typeof s.type === 'string') out.type = [s.type, 'null'];
    // A default that applies only with another field's value: the check leaves it out, the document states it.
    if (s['x-doc-default'] !== undefined) out.default = s['x-doc-default'];
    // Titles name GraphQL's input types; in this document only enums are named (components),
    // so generated clients keep the names they derive from the route (CreateExportRequestFilters).
    if (!Array.isArray(s.enum)) delete out.title;
    // The check's own keys (refusal words, GraphQL's enum values) are not the document's.
    for (const own of ['x-refusal', 'x-enum', 'x-doc-default']) delete out[own];
    return out as TSchema;
  };
  return { ...nullable(decl.schema, false), ...rulesDoc(decl.rules) };
}

/** The bodies of the two creation routes, derived from their declarations (export-request.ts). */
export const filterBody = restBody(FILTER_EXPORT);
export const sqlBody = restBody(SQL_EXPORT);

// ---- parameters: every limit the service holds them to, stated (longer path parameters: 414)

const idOf = (what: string) => pathParam({ type: 'string', description: `The ${what}'s id, as its creation answered it` });
/** The path of one export job or SQL execution. */
export const jobParams = (what: string) => ({ type: 'object', properties: { id: idOf(what) }, required: ['id'] });
/** The path of one file of an export job. */
export const fileParams = {
  type: 'object',
  properties: { id: idOf('job'), name: pathParam({ type: 'string', description: "A file name from the job's files (or manifest.json, README.md)" }) },
  required: ['id', 'name'],
};
/** A listing of export jobs: page size, and the cursor of the page before (a token of the one codec, PAGE_TOKEN_MAX_CHARS at most). */
export const listQuery = {
  type: 'object',
  properties: {
    first: { type: 'integer', minimum: 1, maximum: EXPORT_LIST_MAX, default: EXPORT_LIST_DEFAULT },
    after: { type: 'string', minLength: 1, maxLength: PAGE_TOKEN_MAX_CHARS, description: 'endCursor of the previous page' },
  },
};
/** A signed link's query, in the shapes the service mints (download-links.ts): anything else is refused (403). */
export const linkQuery = {
  type: 'object',
  properties: {
    key: { type: 'string', format: 'uuid', pattern: UUID_PATTERN, description: 'The id of the API key the link was minted for' },
    expires: { type: 'string', pattern: LINK_EXPIRES_PATTERN, description: 'Expiry, Unix seconds' },
    sig: { type: 'string', pattern: LINK_SIG_PATTERN, description: "The link's signature" },
  },
  required: ['key', 'expires', 'sig'],
};

export const pageSchema = {
  type: 'object',
  properties: { jobs: { type: 'array', items: jobSchema }, hasNextPage: { type: 'boolean' }, endCursor: nullable('string') },
} as const;

// One binary media type for every file, answered and documented: generated clients
// (openapi-python-client and the like) then hand back the bytes whatever the file; five
// listed types (Parquet, CSV, NDJSON, JSON, Markdown) made them decode some as text and fail.
// The file's kind is in its name (Content-Disposition) and the job's `format`.
export const FILE_MEDIA_TYPE = 'application/octet-stream';
const fileContent = { [FILE_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } };

/** Answers of the download routes: the file, a part of it, not modified, or an error. */
export const fileResponses = {
  200: { description: 'The file (ETag: its sha256; Content-Disposition names it)', content: fileContent },
  206: { description: 'The requested range (Range: bytes=a-b; If-Range: the ETag)', content: fileContent },
  304: { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' },
};
