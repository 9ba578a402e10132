// The JSON-RPC method table: each method validates its positional params (param-schemas.ts)
// and maps them to one analytics call; results are shaped as SPEC names them. No SQL here.
import { worded, type Wording } from '../../core/errors.ts';
import type { Analytics, TopSortBy } from '../analytics/analytics.ts';
import type { SortOrder, TimeRange, Transaction, TransactionFilters } from '../analytics/types.ts';
import { LIST_LIMITS } from '../../core/limits.ts';
import { PARAM_SCHEMAS, type MethodName } from './param-schemas.ts';
import { validateParams } from './param-validation.ts';

interface ListOptions {
  sortOrder?: SortOrder;
  limit?: number;
  paginationToken?: string;
  filters?: TransactionFilters;
}

interface AddressOptions extends ListOptions {
  transactionDetails?: 'full' | 'signatures' | 'none';
}

interface ProtocolOptions {
  protocolName: string;
  blockTime?: TimeRange;
}

interface ComparisonOptions {
  protocols: string[];
  blockTime?: TimeRange;
}

interface TopOptions {
  limit?: number;
  sortBy?: TopSortBy;
  blockTime?: TimeRange;
}

interface ActivityOptions {
  protocolName?: string;
  blockTime: Required<TimeRange>;
  interval?: 'hour' | 'day';
}

interface InstructionTypeOptions {
  protocolName?: string;
  limit?: number;
  blockTime?: TimeRange;
}

interface FailedOptions {
  protocolName?: string;
  programId?: string;
  limit?: number;
  blockTime?: TimeRange;
}

/** A page of a listing as JSON-RPC returns it. */
export interface ListResult<T> {
  data: T[];
  /** Pass back as options.paginationToken for the next page; null when this is the last. */
  paginationToken: string | null;
}

/** transactionDetails "signatures": the signature-level fields, as getSignaturesForAddress gives. */
export type SignatureInfo = Pick<Transaction, 'signature' | 'slot' | 'blockTime' | 'success'>;

type Handler = (a: Analytics, params: readonly unknown[]) => Promise<unknown>;

/** Every active-protocol name in the filters must exist; the error names its position. */
async function checkProtocols(a: Analytics, names: readonly string[] | undefined): Promise<void> {
  if (!names) return;
  for (const [i, name] of names.entries()) await a.requireProtocol(name, 'protocols', i);
}

// Positional params arrive validated, so the casts below restate what the schema checked.
const handlers: Record<MethodName, Handler> = {
  async getTransaction(a, [signature]) {
    return a.transaction(signature as string);
  },

  async getTransactions(a, [options]): Promise<ListResult<Transaction>> {
    const o = (options ?? {}) as ListOptions;
    const filters = o.filters ?? {};
    await checkProtocols(a, filters.protocols);
    const page = await a.transactions({
      filters,
      sortOrder: o.sortOrder ?? 'desc',
      limit: o.limit ?? LIST_LIMITS.transactions.default,
      cursor: o.paginationToken,
    });
    return { data: page.data, paginationToken: page.next };
  },

  async getTransactionsForAddress(a, [address, options]) {
    const o = (options ?? {}) as AddressOptions;
    const filters = o.filters ?? {};
    await checkProtocols(a, filters.protocols);
    const details = o.transactionDetails ?? 'full';
    if (details === 'none') {
      // No per-record details: only how many records match (limit and paging do not apply,
      // but a token sent along must still be one this listing issued).
      if (o.paginationToken !== undefined) {
        a.checkAddressToken({ address: address as string, filters, sortOrder: o.sortOrder ?? 'asc', limit: 1, cursor: o.paginationToken });
      }
      return { data: [], paginationToken: null, count: await a.addressTransactionCount(address as string, filters) };
    }
    const page = await a.addressTransactions({
      address: address as string,
      filters,
      sortOrder: o.sortOrder ?? 'asc',
      limit: o.limit ?? LIST_LIMITS.transactions.default,
      cursor: o.paginationToken,
    });
    const data: (Transaction | SignatureInfo)[] = details === 'full'
      ? page.data
      : page.data.map(({ signature, slot, blockTime, success }) => ({ signature, slot, blockTime, success }));
    return { data, paginationToken: page.next };
  },

  async getProtocolStats(a, [options]) {
    const o = options as ProtocolOptions;
    await a.requireProtocol(o.protocolName);
    return a.protocolStats(o.protocolName, o.blockTime ?? {});
  },

  async getProtocolComparison(a, [options]) {
    const o = options as ComparisonOptions;
    return a.protocolComparison(o.protocols, o.blockTime ?? {});
  },

  async getProtocolPerformance(a, [options]) {
    const o = options as ProtocolOptions;
    await a.requireProtocol(o.protocolName);
    return a.protocolPerformance(o.protocolName, o.blockTime ?? {});
  },

  async getTopProtocols(a, [options]) {
    const o = (options ?? {}) as TopOptions;
    return a.topProtocols(o.blockTime ?? {}, o.sortBy ?? 'transactions', o.limit ?? LIST_LIMITS.topProtocols.default);
  },

  async getProtocolActivity(a, [options]) {
    const o = options as ActivityOptions;
    if (o.protocolName !== undefined) await a.requireProtocol(o.protocolName);
    return a.activity(o.protocolName, o.blockTime, o.interval ?? 'hour');
  },

  async getInstructionTypes(a, [options]) {
    const o = (options ?? {}) as InstructionTypeOptions;
    if (o.protocolName !== undefined) await a.requireProtocol(o.protocolName);
    return a.instructionTypes(o.protocolName, o.blockTime ?? {}, o.limit ?? LIST_LIMITS.instructionTypes.default);
  },

  async getFailedTransactions(a, [options]) {
    const o = (options ?? {}) as FailedOptions;
    const data = await a.failedTransactions({
      protocolName: o.protocolName,
      programId: o.programId,
      range: o.blockTime ?? {},
      limit: o.limit ?? LIST_LIMITS.failedTransactions.default,
    });
    return { data };
  },

  async getProtocols(a) {
    return a.protocols();
  },
};

export const METHOD_NAMES = Object.keys(PARAM_SCHEMAS) as MethodName[];

const isMethod = (name: string): name is MethodName => Object.hasOwn(handlers, name);

/** The methods as the envelope layer sees them: look up, validate, run. */
/**
 * How JSON-RPC words the analytics layer's logical parameters: each method's options
 * object names them (a list of protocols is `options.protocols` for a comparison and
 * `options.filters.protocols` for a listing).
 */
function wordingFor(method: MethodName): Wording {
  const listing = method === 'getTransactions' || method === 'getTransactionsForAddress';
  return {
    params: {
      protocol: 'options.protocolName',
      protocols: listing ? 'options.filters.protocols' : 'options.protocols',
      range: 'blockTime',
      cursor: 'paginationToken',
      order: 'sortOrder',
    },
    hints: { protocols: 'getProtocols lists the available ones', coarserBucket: 'interval "day"' },
  };
}

export class RpcMethods {
  constructor(private readonly analytics: Analytics) {}

  has(name: string): boolean {
    return isMethod(name);
  }

  async call(name: string, params: readonly unknown[]): Promise<unknown> {
    if (!isMethod(name)) throw new Error(`unknown method ${name}`);
    validateParams(name, params);
    try {
      return await handlers[name](this.analytics, params);
    } catch (err) {
      throw worded(err, wordingFor(name));
    }
  }
}
