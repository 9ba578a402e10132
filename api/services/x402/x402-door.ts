// The x402 plan's parts wired together (services.ts builds one when X402_ENABLED): the
// official resource server over the configured facilitator, the gateway, the pricing, and
// the record of every settled payment.
import type { FastifyRequest } from 'fastify';
import type { X402Config } from '../../../core/config/load-config.ts';
import type { Logger } from '../../../core/logger.ts';
import type { X402PaymentStore } from '../../../warehouse/x402-payment-store.ts';
import { policyOf } from '../access/route-policy.ts';
import { X402Gateway, type PaidCall } from './x402-gateway.ts';
import { Pricing, type Pricer, type PricingDeps, type ToolPricer } from './x402-pricing.ts';
import { resourceServerOf, type SvmChain } from './x402-server.ts';

/** What x402 needs at the HTTP edge: the gateway, the pricing, and where settled payments go. */
export interface X402Door {
  config: X402Config;
  gateway: X402Gateway;
  price: Pricer;
  /** Lets a door price its own calls (GraphQL: what its guard will charge). */
  priceWith: Pricing['priceWith'];
  /** Lets a door price its GET calls by their answer's statements (REST's routes). */
  priceByAnswer: Pricing['priceByAnswer'];
  /** The price of one MCP tool call, in cost units. */
  priceTool: ToolPricer;
  /** A settled payment, for usage and revenue (warehouse/x402-payment-store.ts). */
  settled(req: FastifyRequest, paid: PaidCall, transaction: string): void;
  /** Settles once every settled payment so far is recorded (or its record failed): at close, and for readers of usage. */
  recorded(): Promise<void>;
}

export interface X402DoorDeps extends PricingDeps {
  config: X402Config;
  payments: X402PaymentStore;
  logger: Logger;
  /** The chain an in-process facilitator settles on (tests: LiteSVM); default: X402_SOLANA_RPC_URL. */
  chain?: SvmChain;
  now?: () => number;
}

export async function createX402Door(deps: X402DoorDeps): Promise<X402Door> {
  const pricing = new Pricing(deps);
  /** Records being written: the answer does not wait for them, a close does. */
  const writing = new Set<Promise<void>>();
  const gateway = new X402Gateway(await resourceServerOf(deps.config, deps.chain), deps.config, deps.now, (id) => deps.payments.claim(id));
  return {
    config: deps.config,
    gateway,
    price: pricing.price,
    priceWith: (route, pricer) => pricing.priceWith(route, pricer),
    priceByAnswer: (route, answer) => pricing.priceByAnswer(route, answer),
    priceTool: pricing.priceTool,
    settled(req: FastifyRequest, paid: PaidCall, transaction: string) {
      const route = req.routeOptions.url ?? '';
      const row = {
        settledAt: Date.now(),
        payer: paid.payer,
        amount: paid.amount,
        asset: paid.requirements.asset,
        network: paid.requirements.network,
        transaction,
        interface: policyOf(req).interface,
        route: `${req.method} ${route}`,
        costUnits: paid.units,
      };
      // Off the answer's path; a lost row loses bookkeeping, never the payment (it is on chain).
      const write = deps.payments.insert(row).catch((err: unknown) => deps.logger.error({ err, transaction }, 'x402: a settled payment could not be recorded'));
      writing.add(write);
      void write.finally(() => writing.delete(write));
    },
    async recorded() {
      await Promise.all([...writing]);
    },
  };
}
