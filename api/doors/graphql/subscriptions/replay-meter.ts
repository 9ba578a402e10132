// What a replay costs its key (DESIGN.md section 8: replay costs in proportion to what it
// sends). Opening a stream is one request, like any; live events cost nothing more (one read
// per write serves every stream), but a reconnect with Last-Event-ID may be sent up to a
// day of events from the replay log: one free-key request replayed 83,299 events (24 MB).
// So replayed events are charged to the key's rate limit: one request per block of up to
// STREAM_REPLAY_EVENTS_PER_UNIT events or STREAM_REPLAY_BYTES_PER_UNIT bytes, whichever fills
// first, each block charged before its first event. The key is looked up at each charge, so
// a replay obeys the key as it is now: refused once it is revoked or inactive, charged at its
// plan's current limit.
import type { FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../../core/errors.ts';
import { STREAM_REPLAY_BYTES_PER_UNIT, STREAM_REPLAY_EVENTS_PER_UNIT } from '../../../../core/limits/streams.ts';
import type { ApiKeyRecord } from '../../../../warehouse/api-key-store.ts';

/** One request of the key's rate limit, or the refusal (an AppError: rate limited, forbidden). */
export type ReplayCharge = () => Promise<void>;

export class ReplayMeter {
  /** Requests charged, replayed events and bytes admitted (tests, logs). */
  units = 0;
  events = 0;
  bytes = 0;
  private blockEvents = 0;
  private blockBytes = 0;
  private inBlock = false;

  constructor(private readonly charge: ReplayCharge) {}

  /** Before a replayed event of `bytes` is sent: resolves when it may be, rejects with the refusal otherwise. */
  async admit(bytes: number): Promise<void> {
    if (!this.inBlock) {
      await this.charge();
      this.units += 1;
      this.inBlock = true;
      this.blockEvents = 0;
      this.blockBytes = 0;
    }
    this.events += 1;
    this.bytes += bytes;
    this.blockEvents += 1;
    this.blockBytes += bytes;
    if (this.blockEvents >= STREAM_REPLAY_EVENTS_PER_UNIT || this.blockBytes >= STREAM_REPLAY_BYTES_PER_UNIT) this.inBlock = false;
  }
}

/** Why a key may not be served any more, in access control's words; undefined when it may. */
export function keyRefusal(record: ApiKeyRecord | undefined): string | undefined {
  // A disabled account's keys are refused like revoked ones (access control does the same).
  if (record !== undefined && record.status === 'active' && !record.accountDisabled) return undefined;
  return record?.accountDisabled === true
    ? 'API key belongs to a disabled account'
    : record?.status === 'inactive'
      ? 'API key is inactive'
      : 'API key has been revoked';
}

/** The charge of a replay block to the key that presented `secret`, as the key is now. */
export function chargeKey(req: FastifyRequest, lookup: (secret: string) => Promise<ApiKeyRecord | undefined>, secret: string): ReplayCharge {
  return async () => {
    const record = await lookup(secret);
    const refused = keyRefusal(record);
    if (refused !== undefined || record === undefined) throw new AppError(Errors.forbidden, refused ?? 'API key has been revoked');
    // The key as it is now: a plan changed since the stream opened is charged at its new limit.
    await req.consumeRateLimitOf({ id: record.id, plan: record.plan });
  };
}
