// What a person sees running `npm start`: log lines meant for reading on a terminal (a real
// pseudo-terminal, through script(1)), JSON lines when the output is piped, and a banner whose
// key command works as printed from another shell (no ADMIN_TOKEN or TXA_URL there).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prettyLine } from '../../core/logger.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children)
    if (c.pid !== undefined && c.exitCode === null) {
      try {
        process.kill(-c.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Start api/server/main.ts (in its own process group), on a terminal or piped; resolve with its output once it listens. */
function start(onTerminal: boolean): Promise<{ out: string; child: ChildProcess }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'txa-terminal-'));
  dirs.push(dir);
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), DEMO_ROWS: '0', LOG_LEVEL: 'info' };
  delete env.ADMIN_TOKEN;
  delete env.LOG_FORMAT;
  const node = `${process.execPath} --import tsx api/server/main.ts`;
  const child = onTerminal
    ? spawn('script', ['-qfec', node, '/dev/null'], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['--import', 'tsx', 'api/server/main.ts'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening after 120 s:\n${out.slice(-3000)}`)), 120_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/admin token: /.test(out)) {
        clearTimeout(timer);
        // The banner's last line is written at once; give the rest of it a moment.
        setTimeout(() => resolve({ out: out.replace(/\r\n/g, '\n'), child }), 200);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out.slice(-3000)}`)));
  });
}

describe('log lines', () => {
  it('reads a pino line as time, level, message and fields, with an error stack below', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 40,
        time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        pid: 1,
        hostname: 'h',
        msg: 'slow answer',
        door: 'rest',
        ms: 1200,
        note: 'two words',
      }),
      false,
    );
    expect(line).toBe('03:04:05.006 WARN  slow answer  door=rest ms=1200 note="two words"\n');
    const err = prettyLine(
      JSON.stringify({ level: 50, time: 0, msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' } }),
      false,
    );
    expect(err.split('\n').slice(1, 3)).toEqual(['    Error: boom', '        at x']);
    expect(prettyLine('not json', false)).toBe('not json\n');
  });
});

describe('npm start', () => {
  it('logs for a person on a terminal and JSON lines when piped; the banner prints a key command that works', async () => {
    const [terminal, piped] = await Promise.all([start(true), start(false)]);
    // On a terminal: no JSON line, the level spelt out.
    expect(terminal.out).not.toMatch(/^\{"level"/m);
    expect(terminal.out).toMatch(/^\S*\d\d:\d\d:\d\d\.\d{3}\S* \S*INFO/m);
    // Piped: one JSON object per line.
    expect(piped.out).toMatch(/^\{"level":30,/m);

    const command = /API key: +(.+)$/m.exec(terminal.out)?.[1]?.trim();
    expect(command).toMatch(/^ADMIN_TOKEN=\S+ TXA_URL=http:\/\/127\.0\.0\.1:\d+ npm run keys -- create --plan free --name me$/);
    // Another shell: neither ADMIN_TOKEN nor TXA_URL set there.
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.ADMIN_TOKEN;
    delete env.TXA_URL;
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('bash', ['-c', command!], { env, cwd: process.cwd() }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/txa_|key/i);
  }, 180_000);
});
