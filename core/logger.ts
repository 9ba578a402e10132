import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './config/load-config.ts';

export type { Logger };

// The api-key query parameter is a secret; it must never reach a log line.
export const redactUrl = (url: string): string => url.replace(/([?&]api-key=)[^&]*/gi, '$1[REDACTED]');

interface LoggableRequest {
  id?: string;
  method?: string;
  url?: string;
  ip?: string;
}

/** pino's number for the fatal level, from pino's own table of levels. */
export const PINO_FATAL = pino.levels.values.fatal!;
const LEVEL_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(pino.levels.labels).map(([n, label]) => [n, label.toUpperCase()]));
/** ANSI colour of each level on a terminal: grey, cyan, green, yellow, red, magenta. */
const COLOUR_OF: Readonly<Record<string, string>> = { trace: '90', debug: '36', info: '32', warn: '33', error: '31', fatal: '35' };
const LEVEL_COLOURS: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(COLOUR_OF).map(([label, code]) => [pino.levels.values[label], code]));
/** The time of day in an ISO timestamp (`2026-11-29T12:30:00.000Z` → `12:30:00.000`). */
const ISO_TIME_FROM = 'YYYY-MM-DDT'.length;
const ISO_TIME_TO = 'YYYY-MM-DDTHH:MM:SS.mmm'.length;
/** Fields every line has, or that a person reading a terminal does not need. */
const QUIET_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/** A value as a person reads it after `key=`: strings bare unless they hold spaces, the rest as JSON. */
const shown = (v: unknown): string => (typeof v === 'string' ? (/[\s"=]/.test(v) ? JSON.stringify(v) : v) : (JSON.stringify(v) ?? String(v)));

/**
 * One pino JSON line as a person reads it on a terminal: time, level, message, then the other
 * fields as key=value, and an error's stack on the lines below. `colour` adds ANSI colours.
 */
export function prettyLine(json: string, colour: boolean): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = Number(o.level);
  const paint = (code: string, s: string): string => (colour ? `\u001b[${code}m${s}\u001b[0m` : s);
  const time = typeof o.time === 'number' ? new Date(o.time).toISOString().slice(ISO_TIME_FROM, ISO_TIME_TO) : '';
  const fields = Object.entries(o)
    .filter(([k]) => !QUIET_FIELDS.has(k))
    .map(([k, v]) => `${paint('90', `${k}=`)}${shown(v)}`);
  let line = `${paint('90', time)} ${paint(LEVEL_COLOURS[level] ?? '0', (LEVEL_NAMES[level] ?? String(o.level)).padEnd(5))} ${String(o.msg ?? '')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n`;
  const err = o.err as { type?: string; message?: string; stack?: string } | undefined;
  if (err !== undefined) line += `${String(err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`).replace(/^/gm, '    ')}\n`;
  return line;
}

/** A destination that writes each line prettily to `out` (a terminal). */
export function prettyDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): DestinationStream {
  const colour = out.isTTY === true;
  return { write: (line: string) => void out.write(prettyLine(line, colour)) };
}

/**
 * The logger of an entry point: JSON lines (for log collectors) unless LOG_FORMAT says pretty,
 * or says auto (the default) and stdout is a terminal, where a person reads it.
 */
export function createServiceLogger(level: LogLevel, format: LogFormat): Logger {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  return createLogger(level, pretty ? prettyDestination(process.stdout) : undefined);
}

/** `destination` defaults to stdout; tests pass a stream to read what was logged. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    serializers: {
      req: (req: LoggableRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? ''), ip: req.ip }),
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
