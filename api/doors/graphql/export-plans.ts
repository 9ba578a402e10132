// GraphQL's export fields as thin adapters over the export job service (api/services/exports/):
// exportDataset and cancelExportJob (Mutation), exportJob and exportJobs (Query). They cost
// a fixed amount (the job runs later, under its own caps); the service checks the config
// once (its request declared in export-request.ts, from which exportDataset's input types
// are derived here) and names the part at fault by logical key, which errors.ts words as
// `config.columns[1]`.
import { AppError, Errors } from '../../../core/errors.ts';
import { FILTER_EXPORT, withoutNulls } from '../../services/exports/export-request.ts';
import type { ExportJobView, ExportOwner, ExportService } from '../../services/exports/export-service.ts';
import { inputType, type InputTypes } from './input-sdl.ts';
import { checkRules } from '../../../core/request-rules.ts';
import { PAGE_RULES } from '../../catalog/open-questions.ts';
import { questionName } from './question-args.ts';
import type { FieldPlan } from './field-plans.ts';

type Args = Record<string, unknown>;

/** exportDataset's input types, from the export's one request declaration: ExportConfig and
 *  those it takes (filters are the queries' TransactionFilters, whose other fields the check refuses). */
export function exportInputSdl(): string {
  const types: InputTypes = new Map();
  inputType(FILTER_EXPORT.schema, types, { filters: 'TransactionFilters' });
  return [...types.values()].join('\n\n');
}

const fixed = (run: () => Promise<unknown> | unknown): FieldPlan => ({ question: { kind: 'fixed' }, run: async () => run() });

/** A job this key does not have (none, or another key's) is null, as signature(...) is for an unknown signature. */
function orNull<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    if (err instanceof AppError && err.kind === Errors.notFound) return null;
    throw err;
  }
}

/** The service names the page size `first` (or `last`), as REST's query does; here it is written `pagination.first`. */
function inPagination<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof AppError && (err.field === 'first' || err.field === 'last') && err.message.startsWith(`${err.field} `)) {
      throw new AppError(err.kind, `pagination.${err.message}`, { field: `pagination.${err.field}`, cause: err });
    }
    throw err;
  }
}

/**
 * The plan of an export field, or undefined for fields this module does not own.
 * `creations`: the exportDataset fields of the whole request, checked against the job cap
 * together before any runs (checked one at a time, each saw room for itself: jobs started up
 * to the cap and the rest were 200 field errors).
 */
export function planExportField(exports: ExportService, owner: ExportOwner | null, field: string, args: Args, creations = 1): FieldPlan | undefined {
  const who = (): ExportOwner => {
    if (owner === null) throw new AppError(Errors.unauthorized, 'API key required');
    return owner;
  };
  switch (field) {
    case 'exportDataset':
      // At the cap the request is refused before it runs (429 with Retry-After, like the rate limit).
      exports.checkCaps(who(), creations);
      return fixed(() => exports.create(who(), args.config));
    case 'cancelExportJob':
      return fixed(() => orNull(() => exports.cancel(who(), String(args.id))));
    case 'exportJob':
      return fixed(() => orNull(() => exports.get(who(), String(args.id))));
    case 'exportJobs': {
      const p = (withoutNulls(args.pagination) ?? {}) as { first?: number; after?: string; last?: number; before?: string };
      // Read while planning (an in-memory list): Relay's rules (the open questions' page's,
      // declared once) and a bad cursor refuse the request (400 under graphql-response+json), as on the other connections.
      checkRules(PAGE_RULES, { page: p }, questionName);
      const page = inPagination(() => exports.list(who(), p));
      return fixed(() => ({
        edges: page.jobs.map((node: ExportJobView, i) => ({ node, cursor: page.cursors[i]! })),
        nodes: page.jobs,
        // Exact at both ends and in total: the jobs are one list (job-listing.ts).
        pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: page.hasPreviousPage, startCursor: page.startCursor, endCursor: page.endCursor },
        totalCount: page.totalCount,
        totalCountIsEstimate: false,
      }));
    }
    default:
      return undefined;
  }
}
