// GET /metrics for the standalone ingest process (npm run ingest), which has no API server
// of its own: Prometheus scrapes the process's registry here (the pipeline's, the
// warehouse's and the Kafka source's measurements, and process metrics). In embedded mode
// the source runs inside the API process and the same series appear on the API's /metrics.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
