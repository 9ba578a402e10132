// Counters in Redis, shared by every API process that uses the same REDIS_URL, so a key's
// limit is one limit however many replicas serve it.
import type { Redis } from 'ioredis';
import type { Logger } from '../../../core/logger.ts';
import { MemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.ts';
import { REDIS_WARNING_INTERVAL_MS } from '../../../core/limits/access.ts';

// INCRBY and PEXPIRE in one script: Redis runs it atomically, so a counter can never be
// left without an expiry (a crash between two separate commands could do that).
const INCREMENT = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

type RedisWithIncrement = Redis & { txaIncrement(key: string, units: number, ttlMs: number): Promise<number> };

export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis' as const;
  private readonly redis: RedisWithIncrement;
  // While Redis is unreachable each process limits on its own rather than refusing
  // every request (availability over exactness for a minute-scale limit); it is logged.
  private readonly fallback: MemoryRateLimitStore;
  private lastWarning = 0;

  constructor(
    redis: Redis,
    private readonly log: Logger,
    now: () => number = Date.now,
    private readonly prefix = 'txa:rl:',
  ) {
    redis.defineCommand('txaIncrement', { numberOfKeys: 1, lua: INCREMENT });
    this.redis = redis as RedisWithIncrement;
    this.fallback = new MemoryRateLimitStore(now);
  }

  async increment(key: string, units: number, ttlMs: number): Promise<number> {
    try {
      return Number(await this.redis.txaIncrement(this.prefix + key, units, ttlMs));
    } catch (err) {
      if (Date.now() - this.lastWarning > REDIS_WARNING_INTERVAL_MS) {
        this.lastWarning = Date.now();
        this.log.warn({ err }, 'redis rate-limit store unreachable; limiting per process until it is back');
      }
      return this.fallback.incrementSync(key, units, ttlMs);
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.fallback.close();
  }
}
