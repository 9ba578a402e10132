// A remote x402 facilitator for tests: the official facilitator (@x402/core's x402Facilitator
// with @x402/svm's exact scheme) behind the HTTP API the official HTTPFacilitatorClient speaks
// (POST /verify, POST /settle, GET /supported), settling on a LiteSVM chain with its own fee
// payer. The service is pointed at its URL (X402_FACILITATOR_URL), as at a hosted facilitator.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network } from '@x402/core/types';
import { registerExactSvmScheme } from '@x402/svm/exact/facilitator';
import type { Chain } from './litesvm-chain.ts';

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString();
    });
    req.on('end', () => resolve(text));
  });

export class FacilitatorServer {
  /** Requests it answered, by path. */
  readonly calls: Record<string, number> = {};
  url = '';
  private server: Server | undefined;

  constructor(
    private readonly chain: Chain,
    private readonly network: string,
  ) {}

  async start(): Promise<this> {
    const signer = this.chain.signer(await createKeyPairSignerFromBytes(this.chain.feePayerSecret));
    const facilitator = registerExactSvmScheme(new x402Facilitator(), { signer, networks: this.network as Network });
    this.server = createServer((req, res) => {
      const path = req.url ?? '';
      this.calls[path] = (this.calls[path] ?? 0) + 1;
      void (async () => {
        let answer: unknown;
        if (req.method === 'GET' && path === '/supported') answer = facilitator.getSupported();
        else if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
          const { paymentPayload, paymentRequirements } = JSON.parse(await body(req));
          answer =
            path === '/verify' ? await facilitator.verify(paymentPayload, paymentRequirements) : await facilitator.settle(paymentPayload, paymentRequirements);
        } else {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      })().catch((err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) })));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): void {
    this.server?.close();
  }
}
