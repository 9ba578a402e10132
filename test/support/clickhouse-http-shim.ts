// A ClickHouse-HTTP-compatible endpoint backed by the embedded engine, so the server
// transport (@clickhouse/client) is tested for real without a ClickHouse server binary,
// which cannot be installed here. It speaks the subset of the HTTP interface the client
// uses: GET /ping; POST / with the statement in the body or in ?query= (inserts then carry
// their data in the body), ?param_<name>= values for {name:Type} placeholders, and other
// URL parameters as per-query settings. Errors answer 500 with ClickHouse's "Code: N." text.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Session } from 'chdb';

// Settings that only steer the HTTP protocol itself; the engine must not see them.
const HTTP_ONLY = new Set([
  'wait_end_of_query',
  'enable_http_compression',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'cancel_http_readonly_queries_on_client_close',
  'output_format_json_quote_64bit_integers_on_http',
]);
const NOT_SETTINGS = new Set(['query', 'database', 'query_id', 'default_format', 'session_id', 'user', 'password']);

function withSettings(sql: string, settings: [string, string][]): string {
  if (settings.length === 0) return sql;
  const clause = `SETTINGS ${settings.map(([k, v]) => (/^-?\d+(\.\d+)?$/.test(v) ? `${k} = ${v}` : `${k} = '${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`)).join(', ')}`;
  const m = /\sFORMAT\s+\w+\s*$/i.exec(sql);
  if (/^\s*INSERT\b/i.test(sql)) {
    const f = /\sFORMAT\s+\w+/i.exec(sql);
    return f ? `${sql.slice(0, f.index)} ${clause}${sql.slice(f.index)}` : sql;
  }
  return m ? `${sql.slice(0, m.index)}\n${clause}${sql.slice(m.index)}` : `${sql}\n${clause}`;
}

/** Parameter values arrive TSV-escaped (as the HTTP interface defines); the engine binding wants them raw. */
function tsvUnescape(v: string): string {
  const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', '\\': '\\', "'": "'" };
  return v.replace(/\\(.)/g, (_m, c: string) => map[c] ?? c);
}

export interface Shim {
  url: string;
  close(): Promise<void>;
}

export async function startClickHouseShim(dataDir: string): Promise<Shim> {
  const session = new Session(dataDir);
  // ClickHouse accepts URIs up to 1 MiB (http_max_uri_size); Node's default header limit is 16 KiB.
  const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://shim');
        if (url.pathname === '/ping') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('Ok.\n');
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        const params: Record<string, string> = {};
        const settings: [string, string][] = [];
        for (const [k, v] of url.searchParams) {
          if (k.startsWith('param_')) params[k.slice(6)] = tsvUnescape(v);
          else if (!NOT_SETTINGS.has(k) && !HTTP_ONLY.has(k)) settings.push([k, v]);
        }
        const statement = url.searchParams.get('query');
        const sql = statement === null ? withSettings(body, settings) : `${withSettings(statement, settings)}\n${body}`;
        try {
          const result =
            Object.keys(params).length > 0
              ? await session.queryBindAsync(sql, params, { format: 'TabSeparated' })
              : await session.queryAsync(sql, { format: 'TabSeparated' });
          res.writeHead(200, {
            'content-type': 'text/plain; charset=UTF-8',
            'x-clickhouse-summary': JSON.stringify({ read_rows: String(result.rowsRead), read_bytes: String(result.bytesRead), written_rows: '0' }),
          });
          res.end(Buffer.from(result.bytes()));
        } catch (err) {
          if (process.env.SHIM_DEBUG) console.error('shim error', sql.slice(0, 300), err);
          const e = err as { message?: string; clickhouseCode?: number };
          const code = e.clickhouseCode ?? Number(/Code: (\d+)/.exec(e.message ?? '')?.[1] ?? 1000);
          const message = (e.message ?? String(err)).startsWith('Code:') ? e.message! : `Code: ${code}. DB::Exception: ${e.message}`;
          res.writeHead(500, { 'content-type': 'text/plain; charset=UTF-8', 'x-clickhouse-exception-code': String(code) });
          res.end(message);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      session.close();
    },
  };
}
