// GET /llms.txt (https://llmstxt.org): the service's doors described for agents, in
// Markdown, public like the API descriptions it points to. The MCP tool list is the door's
// own, so it cannot drift from what tools/list answers.
import { PLAN_LIMITS } from '../../../core/plans.ts';
import { SQL_DEFAULT_LIMIT, SQL_MAX_LIMIT } from '../../../core/limits/sql.ts';
import { PUBLISHED_TABLES } from '../../../warehouse/tables.ts';
import type { Tool } from './mcp-tools.ts';

export function llmsTxt(tools: readonly Tool[]): string {
  const plans = Object.entries(PLAN_LIMITS)
    .map(([plan, n]) => `${plan} ${n}`)
    .join(', ');
  return `# Solana DeFi transaction analytics

> Read-only analytics over instruction-level transaction records of Solana DeFi protocols (Jupiter, Raydium, Orca Whirlpool, Pump.fun, …):
> single transactions by signature, filtered listings, per-protocol statistics, comparisons, percentiles, rankings, hourly or daily
> activity, instruction types, failed transactions, and read-only SQL. Every door but this file, /health and the API descriptions
> needs an API key: header \`x-api-key: <key>\` (preferred) or query parameter \`api-key=<key>\`; /mcp and /v1/metrics also take
> \`Authorization: Bearer <key>\`. No key: 401; an invalid, inactive or revoked key: 403; past the plan's requests per minute
> (${plans}): 429 with Retry-After. Without a key, when the operator enabled x402, every door but live streams answers
402 Payment Required with a price instead of 401: pay per call in USDC on Solana (x402 protocol v2, scheme exact) and retry with
the \`PAYMENT-SIGNATURE\` header. On MCP a keyless client connects and lists tools for free; an unpaid tool call answers a tool
error whose structuredContent holds the x402 payment requirements, and the paid retry carries the payment in
\`params._meta["x402/payment"]\` (its result: \`_meta["x402/payment-response"]\`); docs/x402.md. Times are Unix seconds (UTC), fees are lamports, protocol names are snake_case (e.g. jupiter_v6).

## Doors

- [MCP server](/mcp): \`POST /mcp\`, Streamable HTTP (stateless, JSON answers). Tools are the JSON-RPC methods plus run_sql, list_protocols and get_usage; resources: txa://tables/transactions/columns, txa://protocols. Set-up: docs/mcp.md.
- [JSON-RPC 2.0](/v1/openrpc.json): \`POST /v1/rpc\` with positional params, e.g. \`{"jsonrpc":"2.0","id":1,"method":"getProtocolStats","params":[{"protocolName":"jupiter_v6"}]}\`; \`rpc.discover\` or GET /v1/openrpc.json describes every method.
- [REST](/api/v1/openapi.json): \`GET /api/v1/transactions\`, \`/api/v1/transactions/{signature}\`, \`/api/v1/analytics/protocols\`, \`/api/v1/analytics/time-series\`, \`/api/v1/analytics/fees\`, \`/api/v1/stats\`; answers \`{success, data, meta}\`. OpenAPI at /api/v1/openapi.json.
- SQL: \`POST /v1/query\` \`{"query": "SELECT …", "format": "json"|"csv"}\`; one read-only SELECT over ${PUBLISHED_TABLES.join(', ')}; LIMIT at most ${SQL_MAX_LIMIT} (${SQL_DEFAULT_LIMIT} appended when absent); 30 s time-out.
- GraphQL: \`POST /graphql\` (queries: transactions, signature, protocolStats, timeSeries, failedTransactions, queryComplexity; mutation exportDataset); live subscriptions over SSE at /graphql/stream.
- Prometheus metrics of the protocols: \`GET /v1/metrics\` (text format; optional \`protocol=\` and \`instruction_type=\`), for your own Prometheus.

## MCP tools

${tools.map((t) => `- ${t.name}: ${t.description}`).join('\n')}

## Optional

- [Health](/health): \`GET /health\`, no key.
`;
}
