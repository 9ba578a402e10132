// Tells every API process that a key changed, so each drops its cached lookups at once
// instead of waiting for the cache to expire. Without Redis the bus is local only and
// other processes rely on the cache TTL (under one second) alone.
import type { Redis } from 'ioredis';
import type { Logger } from '../../../core/logger.ts';

const CHANNEL = 'txa:key-changes';

export interface KeyChangeBus {
  publish(keyId: string): Promise<void>;
  close(): Promise<void>;
}

export function localKeyChangeBus(onChange: () => void): KeyChangeBus {
  return {
    async publish() {
      onChange();
    },
    async close() {},
  };
}

/** `subscriber` must be a connection of its own: a subscribed Redis connection can do nothing else. */
export async function redisKeyChangeBus(publisher: Redis, subscriber: Redis, onChange: () => void, log: Logger): Promise<KeyChangeBus> {
  subscriber.on('message', (channel: string) => {
    if (channel === CHANNEL) onChange();
  });
  await subscriber.subscribe(CHANNEL);
  return {
    async publish(keyId: string) {
      onChange();
      try {
        await publisher.publish(CHANNEL, keyId);
      } catch (err) {
        // Other processes still see the change when their cache entry expires.
        log.warn({ err, keyId }, 'could not announce key change over redis');
      }
    },
    async close() {
      subscriber.disconnect();
    },
  };
}
