// The protocol registry (DESIGN.md section 5): program id -> protocol name with an active
// flag. Read through a short-lived cache so every process sees an operator's change
// within a second without a query per request.
import type { Warehouse } from './warehouse.ts';
import { usableProtocolRow } from './integrity.ts';
import { TABLES } from './tables.ts';

export interface ProtocolEntry {
  protocolName: string;
  programId: string;
  active: boolean;
}

interface Row {
  protocol_name: string;
  program_id: string;
  active: boolean;
}

export class ProtocolRegistry {
  private cache: { at: number; entries: ProtocolEntry[]; active?: string[] } | undefined;
  private reading: Promise<ProtocolEntry[]> | undefined;
  /** Bumped by a change: a read begun before it neither serves later callers nor fills the cache. */
  private generation = 0;

  constructor(
    private readonly wh: Warehouse,
    private readonly ttlMs = 1000,
  ) {}

  async list(): Promise<ProtocolEntry[]> {
    if (this.cache && Date.now() - this.cache.at < this.ttlMs) return this.cache.entries;
    // Requests that find the cache expired together share one read (as many reads as callers
    // before): they also resume in the order they asked, whatever order reads would finish in.
    if (this.reading === undefined) {
      const reading = this.read(this.generation).finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
      this.reading = reading;
    }
    return this.reading;
  }

  private async read(generation: number): Promise<ProtocolEntry[]> {
    const rows = await this.wh.query<Row>(`SELECT protocol_name, program_id, active FROM ${TABLES.protocols} FINAL ORDER BY protocol_name`);
    // Rows the service cannot use are left out (warehouse/integrity.ts reports them).
    const entries = rows
      .filter((r) => usableProtocolRow(r.protocol_name, r.program_id))
      .map((r) => ({ protocolName: r.protocol_name, programId: r.program_id, active: Boolean(r.active) }));
    if (generation === this.generation) this.cache = { at: Date.now(), entries };
    return entries;
  }

  async get(name: string): Promise<ProtocolEntry | undefined> {
    return (await this.list()).find((p) => p.protocolName === name);
  }

  /** The active names as the cache holds them while it is fresh (no read, no promise: the
   *  answer edge asks on every answer); undefined when a read is due. Not to be changed. */
  activeNamesNow(): readonly string[] | undefined {
    const cache = this.cache;
    if (cache === undefined || Date.now() - cache.at >= this.ttlMs) return undefined;
    cache.active ??= cache.entries.filter((p) => p.active).map((p) => p.protocolName);
    return cache.active;
  }

  /** Names of the protocols whose records are visible in answers. */
  async activeNames(): Promise<string[]> {
    return (await this.list()).filter((p) => p.active).map((p) => p.protocolName);
  }

  /** Every registered name, active or not: records of all of them may be stored. */
  async knownNames(): Promise<Set<string>> {
    return new Set((await this.list()).map((p) => p.protocolName));
  }

  async setActive(name: string, active: boolean): Promise<ProtocolEntry | undefined> {
    const entry = await this.get(name);
    if (!entry) return undefined;
    await this.wh.insert(TABLES.protocols, [
      { protocol_name: name, program_id: entry.programId, active, updated_at: new Date().toISOString().replace('T', ' ').replace('Z', '') },
    ]);
    this.cache = undefined;
    this.reading = undefined;
    this.generation += 1;
    return { ...entry, active };
  }
}
