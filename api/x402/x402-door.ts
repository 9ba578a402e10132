// The x402 plan's parts wired together (services.ts builds one when X402_ENABLED): the
// official resource server over the configured facilitator, the gateway, the pricing, and
// the record of every settled payment.
import type { FastifyRequest } from 'fastify';
import type { X402Config } from '../../core/config/load-config.ts';
import type { Logger } from '../../core/logger.ts';
import type { X402PaymentStore } from '../../warehouse/x402-payment-store.ts';
import { interfaceOf } from '../access/protected-paths.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';
import type { X402Door } from './x402-fastify.ts';
import { X402Gateway, type PaidCall } from './x402-gateway.ts';
import { pricer } from './x402-pricing.ts';
import { resourceServerOf, type SvmChain } from './x402-server.ts';

export interface X402DoorDeps {
  config: X402Config;
  sandbox: SqlSandbox;
  payments: X402PaymentStore;
  logger: Logger;
  /** The chain an in-process facilitator settles on (tests: LiteSVM); default: X402_SOLANA_RPC_URL. */
  chain?: SvmChain;
  now?: () => number;
}

export async function createX402Door(deps: X402DoorDeps): Promise<X402Door> {
  const gateway = new X402Gateway(await resourceServerOf(deps.config, deps.chain), deps.config, deps.now);
  return {
    config: deps.config,
    gateway,
    price: pricer(deps.sandbox),
    settled(req: FastifyRequest, paid: PaidCall, transaction: string) {
      const route = req.routeOptions.url ?? '';
      const row = {
        settledAt: Date.now(),
        payer: paid.payer,
        amount: paid.amount,
        asset: paid.requirements.asset,
        network: paid.requirements.network,
        transaction,
        interface: interfaceOf(route),
        route: `${req.method} ${route}`,
        costUnits: paid.units,
      };
      // Off the answer's path; a lost row loses bookkeeping, never the payment (it is on chain).
      deps.payments.insert(row).catch((err: unknown) => deps.logger.error({ err, transaction }, 'x402: a settled payment could not be recorded'));
    },
  };
}
