// The official x402 server and facilitator (@x402/core, @x402/svm), built from configuration:
// a remote facilitator over HTTP (X402_FACILITATOR_URL), or one in this process that signs
// as fee payer with our own key and talks to a Solana RPC (X402_FACILITATOR_SECRET_KEY,
// X402_SOLANA_RPC_URL). Tests hand in the chain instead: a FacilitatorSvmSigner over LiteSVM.
import { createKeyPairSignerFromBytes, type KeyPairSigner } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { toFacilitatorSvmSigner, type FacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { X402Config } from '../../../core/config/load-config.ts';
import { X402_PRICES } from '../../../core/plans.ts';

/** The chain an in-process facilitator settles on, given our fee-payer key (default: the RPC of X402_SOLANA_RPC_URL). */
export type SvmChain = (feePayer: KeyPairSigner) => FacilitatorSvmSigner;

/** The facilitator the resource server verifies and settles through. */
export async function facilitatorOf(config: X402Config, chain?: SvmChain): Promise<FacilitatorClient> {
  const f = config.facilitator;
  if (f.kind === 'remote') return new HTTPFacilitatorClient({ url: f.url });
  const feePayer = await createKeyPairSignerFromBytes(f.secretKey);
  const signer = chain?.(feePayer) ?? toFacilitatorSvmSigner(feePayer, f.rpcUrl === undefined ? undefined : { defaultRpcUrl: f.rpcUrl });
  // Our key pays every settled transaction's fees, and the payer writes them (compute
  // limit, priority price, signers): capped, or one $0.001 call costs us 0.007 SOL.
  const facilitator = new x402Facilitator().register(config.network as Network, new ExactSvmFacilitator(signer, undefined, X402_PRICES.facilitatorFees));
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
  };
}

/** The framework-neutral resource server, initialized (it learns the facilitator's fee payer). */
export async function resourceServerOf(config: X402Config, chain?: SvmChain): Promise<x402ResourceServer> {
  const server = new x402ResourceServer(await facilitatorOf(config, chain)).register(config.network as Network, new ExactSvmScheme());
  try {
    await server.initialize();
  } catch (err) {
    throw new Error(`x402: the facilitator cannot be reached or does not support exact payments on ${config.network}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return server;
}
