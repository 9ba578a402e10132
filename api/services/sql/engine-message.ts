// The engine's error messages as a client may see them: without the engine's frame, the
// sandbox's wrapper query and settings, the database name, or a value quoted whole.
import { ENGINE_MESSAGE_MAX_CHARS, ENGINE_MESSAGE_TAIL_CHARS } from '../../../core/limits/sql.ts';

export { ENGINE_MESSAGE_MAX_CHARS };

/**
 * The engine's message without its "Code: N. DB::Exception:" frame or our wrapper query, and
 * without the database in table names (`default.transactions` -> `transactions`, and the
 * `database` of server mode): clients name tables without one, the name is the deployment's.
 */
export function engineMessage(err: unknown, database = 'default'): string {
  let m = err instanceof Error ? err.message : String(err);
  // The engine quotes the offending value whole ("Cannot parse string '…'" of a 20 MB
  // string made a 20 MB error body): keep the head and the closing "(CODE)", before any
  // further work on the text.
  if (m.length > ENGINE_MESSAGE_MAX_CHARS) m = cut(m);
  m = m.replace(/^Code: \d+\.\s*/, '').replace(/^DB::Exception:\s*/, '');
  const scope = m.indexOf(': In scope SELECT formatQuerySingleLine');
  if (scope >= 0) m = m.slice(0, scope);
  m = m.replace(/\s*\(version [^)]*\)\s*$/, '');
  // "In scope <query> SETTINGS …" repeats the query with the sandbox's settings (limits, the
  // row filter naming the visible protocols): cut it, whatever its case, keeping the code.
  m = m.replace(/:? in scope [\s\S]*?(?=\. \([A-Z_]+\)$|$)/i, '');
  m = m.replace(/\bSETTINGS\s+[a-z_]+\s*=[\s\S]*?(?=\. \([A-Z_]+\)$|$)/, '');
  for (const db of new Set(['default', database])) {
    const name = db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    m = m.replace(new RegExp(`(^|[^\\w.])(?:\`${name}\`|${name})\\.(?=[\`\\w])`, 'g'), '$1');
  }
  return m.split('\nStack trace')[0]!.trim();
}

/** The message's head, "…", and its error code, in at most ENGINE_MESSAGE_MAX_CHARS. */
function cut(m: string): string {
  const code = /\. \([A-Z_]+\)(?=(?:\s*\(version [^)]*\))?\s*$)/.exec(m.slice(-ENGINE_MESSAGE_TAIL_CHARS))?.[0] ?? '';
  return `${m.slice(0, ENGINE_MESSAGE_MAX_CHARS - code.length - 1)}…${code}`;
}
