// A caller of the x402 plan (docs/x402.md, "What a caller does"): no API key, a Solana wallet
// holding USDC. Over HTTP the official @x402/fetch wrapper answers each 402 by signing the
// transfer it asks for and sending the call again; over MCP the official x402 client signs the
// requirements of the payment-required tool error and the call is sent again with the payment
// in params._meta["x402/payment"] (the x402 MCP transport). test/x402-mcp.test.ts runs both
// functions against the service on a LiteSVM chain.
//
// usage: tsx scripts/clients/x402-client.ts <service URL> <wallet.json (solana-keygen)> <Solana RPC URL>
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createKeyPairSignerFromBytes, type KeyPairSigner } from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';

/**
 * The official x402 client, paying from `wallet` on any Solana cluster, at most $0.05 a call in
 * USDC. `mint`: another token it may pay in (a test's own mint), at most 50,000 atomic units a call.
 */
export const payer = (wallet: KeyPairSigner, rpcUrl: string, mint?: { network: `${string}:${string}`; asset: string }): x402Client =>
  x402Client.fromConfig({
    schemes: [{ network: 'solana:*', client: new ExactSvmScheme(wallet, { rpcUrl }) }],
    spendControls: { maxAmountPerPayment: '$0.05', ...(mint === undefined ? {} : { allowedAssets: [{ ...mint, maxAmountPerPayment: '50000' }] }) },
  });

/** A JSON-RPC call paid over HTTP: the answer, and the settlement (PAYMENT-RESPONSE). */
export async function paidRpc(base: string, client: x402Client, method: string, params: unknown[]) {
  const pay = wrapFetchWithPayment(fetch, client);
  const res = await pay(`${base}/v1/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const settlement = res.ok ? new x402HTTPClient(client).getPaymentSettleResponse((n) => res.headers.get(n)) : undefined;
  return { status: res.status, body: (await res.json()) as unknown, settlement };
}

type ToolResult = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
};

/** An MCP tool call paid inside MCP: called, and if it asks for payment, paid and called again. */
export async function paidTool(base: string, client: x402Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const mcp = new Client({ name: 'x402-example', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  try {
    const first = (await mcp.callTool({ name, arguments: args })) as ToolResult;
    const required = first.structuredContent as PaymentRequired | undefined;
    if (first.isError !== true || required?.x402Version === undefined) return first;
    const payment = await client.createPaymentPayload(required);
    return (await mcp.callTool({ name, arguments: args, _meta: { 'x402/payment': payment } })) as ToolResult;
  } finally {
    await mcp.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [base = 'http://127.0.0.1:8080', walletFile = 'wallet.json', rpcUrl = 'https://api.devnet.solana.com'] = process.argv.slice(2);
  const wallet = await createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(walletFile, 'utf8')) as number[]));
  const client = payer(wallet, rpcUrl);
  console.log(JSON.stringify(await paidRpc(base, client, 'getProtocolStats', [{ protocolName: 'jupiter_v6' }]), null, 1));
  const tool = await paidTool(base, client, 'getTopProtocols', { options: { limit: 3 } });
  console.log(tool.content[0]?.text, JSON.stringify(tool._meta?.['x402/payment-response']));
}
