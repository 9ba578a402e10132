// GET /metrics for the standalone ingest process (npm run ingest), which has no API server
// of its own: Prometheus scrapes the Kafka source's measurements here. In embedded mode
// the source runs inside the API process and its metrics appear on the API's /metrics.
import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, register } from 'prom-client';

export async function startMetricsServer(port: number, host: string): Promise<Server> {
  // Process metrics (CPU, memory, event loop) belong to this process's own registry use.
  collectDefaultMetrics();
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    register.metrics().then(
      (body) => res.writeHead(200, { 'content-type': register.contentType }).end(body),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
