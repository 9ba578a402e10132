// Which protocols a request may read: the one place a request's protocols are resolved
// against the active ones (inactive protocols are "available on request", so hidden).
// The facade reads the registry once per request and resolves here.
import { QUOTED_PROTOCOL_MAX_CHARS } from './limits/questions.ts';
import { AppError, Errors, hint, param } from './errors.ts';

/** How a request names its protocols, and how strictly each name is checked. */
export type ProtocolAsk =
  /** One protocol that must be active (every visible one when absent). */
  | { kind: 'one'; name: string | undefined }
  /** Each must be active; kept as asked, in order (one answer item per name). */
  | { kind: 'each'; names: readonly string[] }
  /** A non-empty list, each active, duplicates dropped (every visible one when absent). */
  | { kind: 'list'; names: readonly string[] | undefined }
  /** The visible ones, narrowed to these when given: an unknown name just matches nothing. */
  | { kind: 'narrow'; names: readonly string[] | undefined }
  /** As narrow, but each name given must be active (JSON-RPC's listing filters). */
  | { kind: 'known'; names: readonly string[] | undefined };

/** The kinds a record listing takes: its filter narrows, strictly or not. */
export type ListingScope = 'narrow' | 'known';

export function unknownProtocol(name: string, key: 'protocol' | 'protocols', index?: number): AppError {
  // Quoted as JSON, and cut short: a hostile name is not echoed back whole.
  const shown = JSON.stringify(name.length > QUOTED_PROTOCOL_MAX_CHARS ? `${name.slice(0, QUOTED_PROTOCOL_MAX_CHARS)}…` : name);
  return new AppError(Errors.invalidParams, `${param(key, index)}: unknown protocol ${shown} (${hint('protocols')})`, { field: key });
}

export function resolveProtocols(active: readonly string[], ask: ProtocolAsk): string[] {
  switch (ask.kind) {
    case 'one':
      if (ask.name === undefined) return [...active];
      if (!active.includes(ask.name)) throw unknownProtocol(ask.name, 'protocol');
      return [ask.name];
    case 'each':
      for (const [i, name] of ask.names.entries()) if (!active.includes(name)) throw unknownProtocol(name, 'protocols', i);
      return [...ask.names];
    case 'list':
      if (ask.names === undefined) return [...active];
      if (ask.names.length === 0) {
        throw new AppError(Errors.invalidParams, `${param('protocols')} must name at least one protocol (${hint('protocols')}); leave it out for all of them`, {
          field: 'protocols',
        });
      }
      return [...new Set(resolveProtocols(active, { kind: 'each', names: ask.names }))];
    case 'known':
      if (ask.names !== undefined) resolveProtocols(active, { kind: 'each', names: ask.names });
      return resolveProtocols(active, { kind: 'narrow', names: ask.names });
    case 'narrow': {
      const names = ask.names;
      return names === undefined ? [...active] : active.filter((p) => names.includes(p));
    }
  }
}
