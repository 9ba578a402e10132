// The x402 plan's settings (docs/x402.md): keyless calls paid per call in a Solana SPL token
// (USDC) over HTTP 402. Off unless X402_ENABLED; when on, every address, the network, the
// facilitator and the prices are checked here, at start, so a deployment that would take
// payments it cannot settle never starts.
import { getBase58Encoder, isAddress } from '@solana/kit';
import type { Problems } from './env-reader.ts';
import { type EnvVars, QUOTED_ADDRESS_CHARS, SECRET_KEY_BYTES } from './env-schema.ts';
import type { X402Config } from './types.ts';

/** CAIP-2 ids of Solana's clusters, and the names operators also write for them. */
export const SOLANA_NETWORKS: Readonly<Record<string, string>> = Object.freeze({
  solana: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana-mainnet': 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana-devnet': 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  'solana-testnet': 'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z',
});

/** Circle's USDC mint on each cluster: the default X402_ASSET. */
const USDC: Readonly<Record<string, string>> = Object.freeze({
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z': '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
});

/** A Solana secret key as solana-keygen writes it (a JSON array of 64 numbers) or as base58. */
function secretKey(p: Problems, name: string, raw: string): Uint8Array | undefined {
  try {
    const bytes = raw.startsWith('[') ? Uint8Array.from(JSON.parse(raw) as number[]) : getBase58Encoder().encode(raw);
    if (bytes.length === SECRET_KEY_BYTES) return Uint8Array.from(bytes);
  } catch {
    /* reported below */
  }
  p.add(`${name} must be a 64-byte Solana secret key, as a JSON array of numbers (solana-keygen) or base58`);
  return undefined;
}

function address(p: Problems, name: string, value: string | undefined, what: string): string {
  if (value === undefined) {
    p.add(`${name} must be set when X402_ENABLED is true: ${what}`);
    return '';
  }
  if (!isAddress(value)) p.add(`${name} must be a base58 Solana address, got "${value.slice(0, QUOTED_ADDRESS_CHARS)}"`);
  return value;
}

function facilitator(v: EnvVars, p: Problems): X402Config['facilitator'] {
  const url = v.X402_FACILITATOR_URL;
  const rawKey = v.X402_FACILITATOR_SECRET_KEY;
  const rpcUrl = v.X402_SOLANA_RPC_URL;
  if (url !== undefined && rawKey !== undefined)
    p.add('set X402_FACILITATOR_URL (a remote facilitator) or X402_FACILITATOR_SECRET_KEY (settle in-process), not both');
  if (rawKey !== undefined)
    return { kind: 'local', secretKey: secretKey(p, 'X402_FACILITATOR_SECRET_KEY', rawKey) ?? new Uint8Array(SECRET_KEY_BYTES), rpcUrl };
  if (url === undefined)
    p.add(
      'X402_ENABLED is true but no facilitator is set: X402_FACILITATOR_URL, or X402_FACILITATOR_SECRET_KEY (and X402_SOLANA_RPC_URL) to settle in-process',
    );
  return { kind: 'remote', url: url ?? '' };
}

export function x402Section(v: EnvVars, p: Problems): X402Config {
  const enabled = v.X402_ENABLED;
  const rawNetwork = v.X402_NETWORK;
  const network = SOLANA_NETWORKS[rawNetwork] ?? rawNetwork;
  const prices = { perMillionUnits: v.X402_PRICE_PER_MILLION_UNITS, floor: v.X402_PRICE_FLOOR };
  const validitySeconds = v.X402_VALIDITY_SECONDS;
  const requirementsPerMinute = v.X402_REQUIREMENTS_PER_MINUTE;
  if (!enabled) {
    return { enabled, network, payTo: '', asset: '', facilitator: { kind: 'remote', url: '' }, prices, validitySeconds, requirementsPerMinute };
  }
  if (!Object.values(SOLANA_NETWORKS).includes(network)) {
    p.add(`X402_NETWORK must be solana, solana-devnet, solana-testnet or their CAIP-2 ids, got "${rawNetwork}"`);
  }
  const payTo = address(p, 'X402_PAY_TO', v.X402_PAY_TO, 'the Solana address (wallet) paid for every call');
  const asset = address(p, 'X402_ASSET', v.X402_ASSET ?? USDC[network], 'the SPL token mint callers pay in (USDC by default)');
  return { enabled, network, payTo, asset, facilitator: facilitator(v, p), prices, validitySeconds, requirementsPerMinute };
}
