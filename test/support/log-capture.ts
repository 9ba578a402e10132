// A logger whose lines a test can read back: for asserting what was (and was not) logged.
import { Writable } from 'node:stream';
import type { LogLevel } from '../../core/config/load-config.ts';
import { createLogger, type Logger } from '../../core/logger.ts';

export interface CapturedLog {
  logger: Logger;
  /** Everything logged so far, one JSON line per entry. */
  text(): string;
}

export function captureLog(level: LogLevel): CapturedLog {
  let logged = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logged += chunk.toString('utf8');
      done();
    },
  });
  return { logger: createLogger(level, sink), text: () => logged };
}
