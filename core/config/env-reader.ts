// Reading variables from an environment (core/config.ts hands it process.env): each reader
// checks one variable and, when it is wrong, records the problem and goes on with the
// default, so that every problem of a deployment is reported at once.

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export class EnvReader {
  /** Every problem found so far, in the order the variables were read. */
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  problem(message: string): void {
    this.problems.push(message);
  }

  /** A variable exactly as given (a password may hold spaces at either end). */
  raw(name: string): string | undefined {
    return this.env[name];
  }

  /** A variable trimmed; unset when absent or blank. */
  str(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  int(name: string, def: number, min: number, max: number): number {
    const raw = this.str(name);
    if (raw === undefined) return def;
    if (!/^-?\d+$/.test(raw)) {
      this.problem(`${name} must be an integer, got "${raw}"`);
      return def;
    }
    const n = Number(raw);
    if (n < min || n > max) this.problem(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.str(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) this.problem(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
    } catch {
      this.problem(`${name} is not a valid URL: "${raw}"`);
    }
    return raw;
  }

  bool(name: string, def: boolean): boolean {
    const raw = this.str(name)?.toLowerCase();
    if (raw === undefined) return def;
    if (['1', 'true', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'no'].includes(raw)) return false;
    this.problem(`${name} must be true or false, got "${raw}"`);
    return def;
  }

  /** A Kafka topic name, by Kafka's own rule. */
  topicName(name: string, def: string): string {
    const v = this.str(name) ?? def;
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(v)) this.problem(`${name} must be 1-249 characters of letters, digits, ".", "_" or "-", got "${v}"`);
    return v;
  }
}
