// The access-control parts of one API process, built from configuration: key lookup,
// rate limiting (in-process, or Redis when REDIS_URL is set), key-change announcements
// and usage recording. services.ts builds one; a test may build a second one on the same
// warehouse to play a second API process.
import { Redis } from 'ioredis';
import type { Config } from '../../../core/config/load-config.ts';
import type { Logger } from '../../../core/logger.ts';
import { ApiKeyStore } from '../../../warehouse/api-key-store.ts';
import { UsageStore } from '../../../warehouse/usage-store.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { PlanAnswerMemory } from './answer-memory.ts';
import { localKeyChangeBus, redisKeyChangeBus, type KeyChangeBus } from './key-change-bus.ts';
import { KeyAuthenticator } from './key-authenticator.ts';
import type { Metrics } from '../../../core/metrics.ts';
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.ts';
import { InFlightLimiter } from './in-flight.ts';
import { FixedWindowLimiter } from './rate-limiter.ts';
import { RedisRateLimitStore } from './redis-rate-limit-store.ts';
import { UsageRecorder } from './usage-recorder.ts';
import type { X402Door } from '../x402/x402-door.ts';

export interface Access {
  keys: ApiKeyStore;
  authenticator: KeyAuthenticator;
  limiter: FixedWindowLimiter;
  rateLimitStore: RateLimitStore;
  anonymousPerMinute: number;
  /** Answer bytes held per plan across this process's requests (PLAN_ANSWER_MEMORY_BYTES). */
  answerMemory: PlanAnswerMemory;
  /** JSON-RPC, REST and GraphQL requests in flight per key (PLAN_CONCURRENCY). */
  inFlight: InFlightLimiter;
  usageStore: UsageStore;
  usage: UsageRecorder;
  metrics: Metrics;
  /** Keyless calls paid over HTTP 402 (X402_ENABLED; services.ts sets it once built); undefined: off. */
  x402: X402Door | undefined;
  /** The clock of rate-limit windows (tests move it). */
  now: () => number;
  /** Call after changing a key: every process drops its cached lookups. */
  keyChanged(keyId: string): Promise<void>;
  /** Be told when any key changed (here or, with Redis, in another process): open streams
   *  re-check their keys at once instead of at their next periodic check. */
  onKeyChange(listener: () => void): () => void;
  /** Flush usage and disconnect from Redis. */
  close(): Promise<void>;
}

export interface AccessDeps {
  config: Config;
  wh: Warehouse;
  logger: Logger;
  metrics: Metrics;
  /** Clock of rate-limit windows; tests move it instead of sleeping. Usage minutes stay
   *  on real time: they are stored, and must be real dates. */
  now?: () => number;
}

function connectRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    // Fail a command fast rather than queueing it while disconnected: the rate limiter
    // then falls back to in-process counting instead of stalling requests.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  redis.on('error', (err: Error) => log.debug({ err }, 'redis connection error'));
  return redis;
}

/** The Redis URL without its password, for error messages. */
const redactedRedisUrl = (url: string): string => {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
};

export async function createAccess(deps: AccessDeps): Promise<Access> {
  const { config, wh, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const keys = new ApiKeyStore(wh);
  const authenticator = new KeyAuthenticator(keys, config.access.keyCacheTtlMs);
  const usageStore = new UsageStore(wh);
  const usage = new UsageRecorder(usageStore, config.access.usageFlushMs, logger, Date.now, () => metrics.usageFlushFailures.inc());

  let rateLimitStore: RateLimitStore;
  let bus: KeyChangeBus;
  const keyListeners = new Set<() => void>();
  const onBusChange = (): void => {
    authenticator.invalidate();
    for (const l of keyListeners) l();
  };
  const redisClients: Redis[] = [];
  if (config.redisUrl !== undefined) {
    const commands = connectRedis(config.redisUrl, logger);
    const subscriber = connectRedis(config.redisUrl, logger);
    redisClients.push(commands, subscriber);
    try {
      await Promise.all([commands.connect(), subscriber.connect()]);
    } catch (err) {
      commands.disconnect();
      subscriber.disconnect();
      // Starting anyway would silently turn the shared limit into a per-process one.
      throw new Error(`cannot reach REDIS_URL ${redactedRedisUrl(config.redisUrl)}: ${(err as Error).message}`, { cause: err });
    }
    rateLimitStore = new RedisRateLimitStore(commands, logger, now);
    bus = await redisKeyChangeBus(commands, subscriber, onBusChange, logger);
  } else {
    rateLimitStore = new MemoryRateLimitStore(now);
    bus = localKeyChangeBus(onBusChange);
  }

  return {
    keys,
    authenticator,
    limiter: new FixedWindowLimiter(rateLimitStore, now),
    rateLimitStore,
    answerMemory: new PlanAnswerMemory(),
    anonymousPerMinute: config.access.anonymousPerMinute,
    inFlight: new InFlightLimiter(),
    usageStore,
    usage,
    metrics,
    x402: undefined,
    now,
    keyChanged: (keyId) => bus.publish(keyId),
    onKeyChange(listener) {
      keyListeners.add(listener);
      return () => keyListeners.delete(listener);
    },
    async close() {
      await usage.close();
      await bus.close();
      await rateLimitStore.close();
      for (const r of redisClients) r.disconnect();
    },
  };
}
