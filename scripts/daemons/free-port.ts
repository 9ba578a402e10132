// Daemons the tests start themselves (redis-server, prometheus, kafka): a TCP port free
// right now on 127.0.0.1 for those that must be told their port up front, and a clean stop.
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** SIGTERM the daemon, wait for it to exit, then delete its working directory. */
export async function stopDaemon(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
