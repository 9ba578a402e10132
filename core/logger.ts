import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger };

// The api-key query parameter is a secret; it must never reach a log line.
export const redactUrl = (url: string): string => url.replace(/([?&]api-key=)[^&]*/gi, '$1[REDACTED]');

interface LoggableRequest {
  id?: string;
  method?: string;
  url?: string;
  ip?: string;
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
