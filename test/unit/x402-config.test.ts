// The x402 settings are checked at start (issue 39): each bad X402_* value stops the service
// with a sentence naming the variable and what it must be; off, nothing is asked for.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/load-config.ts';

const PAY_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const KEY = JSON.stringify(Array.from({ length: 64 }, (_, i) => i));
const ON = { DATA_DIR: '/tmp/x402-config', X402_ENABLED: 'true', X402_PAY_TO: PAY_TO, X402_FACILITATOR_URL: 'https://x402.org/facilitator' };

describe('X402_* settings', () => {
  it('off by default, and nothing else is asked for', () => {
    expect(loadConfig({ DATA_DIR: '/tmp/x402-config' }).x402).toMatchObject({ enabled: false });
  });

  it('the documented settings load: devnet USDC by default, prices and limits as given', () => {
    const c = loadConfig({
      ...ON,
      X402_PRICE_PER_MILLION_UNITS: '20000',
      X402_PRICE_FLOOR: '500',
      X402_VALIDITY_SECONDS: '90',
      X402_REQUIREMENTS_PER_MINUTE: '30',
    }).x402;
    expect(c).toMatchObject({
      enabled: true,
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      payTo: PAY_TO,
      asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      facilitator: { kind: 'remote', url: 'https://x402.org/facilitator' },
      prices: { perMillionUnits: 20000, floor: 500 },
      validitySeconds: 90,
      requirementsPerMinute: 30,
    });
    expect(loadConfig({ ...ON, X402_FACILITATOR_URL: '', X402_FACILITATOR_SECRET_KEY: KEY, X402_NETWORK: 'solana' }).x402).toMatchObject({
      network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      facilitator: { kind: 'local' },
    });
  });

  it.each([
    ['no pay-to address', { X402_PAY_TO: '' }, /X402_PAY_TO must be set when X402_ENABLED is true/],
    ['a pay-to that is no address', { X402_PAY_TO: '0xabc' }, /X402_PAY_TO must be a base58 Solana address, got "0xabc"/],
    ['a mint that is no address', { X402_ASSET: 'usdc' }, /X402_ASSET must be a base58 Solana address, got "usdc"/],
    [
      'an unknown network',
      { X402_NETWORK: 'base-sepolia' },
      /X402_NETWORK must be solana, solana-devnet, solana-testnet or their CAIP-2 ids, got "base-sepolia"/,
    ],
    [
      'both facilitators',
      { X402_FACILITATOR_SECRET_KEY: KEY },
      /set X402_FACILITATOR_URL \(a remote facilitator\) or X402_FACILITATOR_SECRET_KEY \(settle in-process\), not both/,
    ],
    ['no facilitator', { X402_FACILITATOR_URL: '' }, /X402_ENABLED is true but no facilitator is set/],
    ['a facilitator URL of another scheme', { X402_FACILITATOR_URL: 'ftp://x.org' }, /X402_FACILITATOR_URL must use http: or https:/],
    [
      'a key of the wrong size',
      { X402_FACILITATOR_URL: '', X402_FACILITATOR_SECRET_KEY: '[1,2,3]' },
      /X402_FACILITATOR_SECRET_KEY must be a 64-byte Solana secret key/,
    ],
    ['a price floor of zero', { X402_PRICE_FLOOR: '0' }, /X402_PRICE_FLOOR must be between 1 and/],
    ['a validity too short', { X402_VALIDITY_SECONDS: '5' }, /X402_VALIDITY_SECONDS must be between 10 and 3600, got 5/],
    ['a 402 budget of zero', { X402_REQUIREMENTS_PER_MINUTE: '0' }, /X402_REQUIREMENTS_PER_MINUTE must be between 1 and/],
    ['X402_ENABLED not a boolean', { X402_ENABLED: 'yes please' }, /X402_ENABLED/],
  ])('%s: refused with the reason', (_case, env, reason) => {
    expect(() => loadConfig({ ...ON, ...env })).toThrow(reason);
  });
});
