// Demo-data profiles of the registry's protocols (DESIGN.md section 5): how often each
// appears, its instruction mix, compute units, accounts, fees, and how it fails.
//
// Where the figures come from (read this before quoting a demo figure as a fact):
// - Program ids and instruction names: each program's public interface definition (IDL),
//   as in DESIGN.md section 5. Error names and codes: the programs' IDL error tables
//   (Anchor custom errors start at 6000 = 0x1770); Raydium AMM v4's 0x1e (30) is its
//   native ExceededSlippage.
// - Fee mechanics (facts, solana.com/docs/core/fees): 5,000 lamports per signature plus a
//   priority fee of ceil(CU price [micro-lamports] x CU limit / 1,000,000) lamports; the
//   fee is charged whether the transaction succeeds or fails; 1.4M CU is the transaction
//   maximum. Instructions that create a mint or position keypair (pump.fun create,
//   createPool, openPosition*) carry a second signature, hence 10,000 lamports of base fee.
// - CU limits: Jupiter's swap API simulates and sets the limit (dynamicComputeUnitLimit,
//   hub.jup.ag "Landing transactions"), so its headroom is small; pump.fun's public docs
//   advise a static limit "like 100_000" for buy/sell instead of simulating, so pump
//   traffic asks for far more than it uses. Other headrooms: ESTIMATES.
// - CU used: Raydium AMM v4 swap measured at 25,631 CU (raydium-io/raydium-amm PR #62);
//   Whirlpool swap 51k-59k CU in Orca's own test (orca-so/whirlpools PR #104); pump.fun
//   buy/sell depend on PDA bumps and logged amounts (pump-public-docs FAQ). Jupiter routes
//   are the sum of the AMMs they call (2-4 hops): ESTIMATE from those. Others: ESTIMATES.
// - Priority-fee levels (CU price median and 99th percentile) and the share of
//   transactions paying one: ESTIMATES in the shape public analyses describe (Jito/priority
//   fee reports: fee spend concentrates in latency-sensitive memecoin trading on pump.fun
//   and PumpSwap; frontends add small default fees; Jupiter's example caps the priority fee
//   at 10,000,000 lamports). Not measured from the chain by us.
// - Failure rates: ESTIMATES (bot-heavy memecoin venues fail more, mostly on slippage);
//   overall a few percent, as DESIGN.md asks. Error mixes: the first error of each list is
//   the most frequent (weights are estimates).
// - Accounts count ranges: the instruction's account list in the IDL (e.g. Raydium AMM v4
//   swap 17-18, Whirlpool swap 11, twoHopSwap 20+, pump.fun buy 12-16) plus the compute
//   budget, system and token programs of the transaction; Jupiter routes add every hop's
//   accounts (through address lookup tables). Ranges rounded: ESTIMATES from the IDLs.
// - Weights (market shares) and pool counts: a plausible, skewed market, not measurements.

export interface InstructionProfile {
  name: string;
  weight: number;
  /** Compute units consumed by a successful call, uniform in [cuMin, cuMax]. */
  cuMin: number;
  cuMax: number;
  /** Accounts the transaction involves, uniform in [accMin, accMax]. */
  accMin: number;
  accMax: number;
  /** Signatures on the transaction (base fee = 5,000 lamports each). */
  signers: number;
}

export interface FeeProfile {
  /** Share of transactions that set a priority fee (the rest pay the base fee only). */
  prioritized: number;
  /** Compute-unit price in micro-lamports: median and 99th percentile (log-normal). */
  cuPriceMedian: number;
  cuPriceP99: number;
  /** CU limit asked for / CU used (the priority fee is paid on the limit, not the use). */
  cuLimitHeadroom: number;
  /** Priority fee ceiling in lamports (frontends cap what they bid). */
  maxPriorityLamports: number;
}

export interface ProtocolProfile {
  protocol: string;
  programId: string;
  weight: number;
  failRate: number;
  fee: FeeProfile;
  /** Distinct pools (markets, bonding curves, reserves) the protocol's traffic spreads over, Zipf-like. */
  pools: number;
  /** Token mints of its pools: memecoins minted by pump.fun (addresses end in "pump"), or a market of majors and others. */
  mints: 'pump' | 'market';
  /** An aggregator's accounts are the pools of the venues it routes through. */
  routesThrough?: readonly string[];
  instructions: InstructionProfile[];
  /** [error, weight]; a failure of "exceeded CUs meter" consumes the whole CU limit. */
  errors: ReadonlyArray<readonly [string, number]>;
}

/** Addresses every Solana user meets: programs and the most traded mints (public, well known). */
export const WELL_KNOWN = {
  tokenProgram: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  token2022Program: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  wrappedSol: 'So11111111111111111111111111111111111111112',
  /** Majors, most traded first: USDC, USDT, JUP, BONK. Pools of `market` protocols pair them first. */
  majorMints: [
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
    'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN',
    'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
  ],
} as const;

/** The error a transaction gets when it runs out of its CU limit (a runtime error, any program). */
export const CU_EXCEEDED = 'exceeded CUs meter at BPF instruction';

/** Where the demo's slots are anchored: mainnet's slot at a Unix time (2.5 slots a second from there). */
export const SLOT_ANCHOR = { time: 1_700_000_000, slot: 229_000_000 } as const;
/** Shares of a profile (failRate, fee.prioritized) are drawn as whole parts of this many. */
export const SHARE_SCALE = 10_000;
/**
 * The generator's independent draws (demo-generator.ts): each is a row's hash, or its
 * transaction's (`src`), salted with its own number, so that changing one draw leaves the
 * others as they were. A number is a draw's identity: renumbering one changes the demo data.
 */
export const DEMO_DRAWS = {
  secondInstruction: 0,
  protocol: 1,
  instruction: 2,
  computeUnits: 3,
  outcome: 4,
  prioritized: 5,
  signatureHigh: 6,
  signatureLow: 7,
  accountsCount: 9,
  wallet: 10,
  errorKind: 11,
  poolRank: 12,
  venue: 13,
  quoteMint: 14,
  tokenProgram: 15,
  failedShare: 16,
  cuPriceRadius: 17,
  cuPriceAngle: 18,
  transactionJitter: 19,
} as const;

const i = (name: string, weight: number, cu: readonly [number, number], acc: readonly [number, number], signers = 1): InstructionProfile => ({
  name,
  weight,
  cuMin: cu[0],
  cuMax: cu[1],
  accMin: acc[0],
  accMax: acc[1],
  signers,
});

export const PROTOCOL_PROFILES: readonly ProtocolProfile[] = [
  {
    // Aggregator: most volume, routes through the AMMs below; frontend default fees.
    protocol: 'jupiter_v6',
    programId: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4',
    weight: 300,
    failRate: 0.04,
    fee: { prioritized: 0.9, cuPriceMedian: 150_000, cuPriceP99: 6_000_000, cuLimitHeadroom: 1.2, maxPriorityLamports: 10_000_000 },
    pools: 4000,
    mints: 'market',
    routesThrough: ['whirlpool', 'raydium_amm_v3', 'raydium_cp_swap', 'meteora_dlmm', 'raydium_amm_v4', 'pump_amm'],
    instructions: [
      i('route', 30, [90_000, 400_000], [20, 48]),
      i('sharedAccountsRoute', 35, [110_000, 450_000], [24, 56]),
      i('exactOutRoute', 5, [120_000, 420_000], [24, 52]),
      i('routeV2', 15, [90_000, 380_000], [18, 44]),
      i('sharedAccountsRouteV2', 14, [100_000, 400_000], [22, 52]),
      i('claim', 1, [15_000, 30_000], [8, 10]),
    ],
    errors: [
      ['custom program error: 0x1771 (SlippageToleranceExceeded)', 70],
      [CU_EXCEEDED, 12],
      ['custom program error: 0x1788 (InvalidRoutePlan)', 8],
      ['insufficient funds', 10],
    ],
  },
  {
    // Memecoin bonding curve: bots and snipers bid the highest CU prices on a static 100k-ish limit.
    protocol: 'pump_fun',
    programId: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P',
    weight: 250,
    failRate: 0.09,
    fee: { prioritized: 0.97, cuPriceMedian: 1_000_000, cuPriceP99: 60_000_000, cuLimitHeadroom: 2.2, maxPriorityLamports: 50_000_000 },
    pools: 20_000,
    mints: 'pump',
    instructions: [
      i('buy', 45, [30_000, 75_000], [14, 18]),
      i('sell', 40, [28_000, 70_000], [14, 17]),
      i('create', 8, [90_000, 160_000], [16, 20], 2),
      i('migrate', 1, [150_000, 300_000], [24, 30]),
      i('buyExactSolIn', 6, [32_000, 78_000], [14, 18]),
    ],
    errors: [
      ['custom program error: 0x1772 (TooMuchSolRequired)', 45],
      ['custom program error: 0x1773 (TooLittleSolReceived)', 35],
      ['custom program error: 0x1775 (BondingCurveComplete)', 12],
      [CU_EXCEEDED, 8],
    ],
  },
  {
    protocol: 'raydium_amm_v3',
    programId: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK',
    weight: 100,
    failRate: 0.03,
    fee: { prioritized: 0.8, cuPriceMedian: 100_000, cuPriceP99: 5_000_000, cuLimitHeadroom: 1.5, maxPriorityLamports: 10_000_000 },
    pools: 3000,
    mints: 'market',
    instructions: [
      i('swap', 50, [40_000, 120_000], [13, 17]),
      i('swapV2', 35, [45_000, 130_000], [16, 20]),
      i('openPositionV2', 4, [120_000, 220_000], [20, 24], 2),
      i('increaseLiquidityV2', 4, [70_000, 140_000], [16, 19]),
      i('decreaseLiquidityV2', 4, [70_000, 140_000], [18, 22]),
      i('closePosition', 3, [20_000, 40_000], [8, 10]),
    ],
    errors: [
      ['custom program error: 0x1786 (TooLittleOutputReceived)', 75],
      ['custom program error: 0x177e (SqrtPriceLimitOverflow)', 15],
      [CU_EXCEEDED, 10],
    ],
  },
  {
    // Orca's users trade through its frontend and aggregators: modest fees, few failures.
    protocol: 'whirlpool',
    programId: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc',
    weight: 100,
    failRate: 0.025,
    fee: { prioritized: 0.75, cuPriceMedian: 50_000, cuPriceP99: 2_000_000, cuLimitHeadroom: 1.4, maxPriorityLamports: 5_000_000 },
    pools: 2500,
    mints: 'market',
    instructions: [
      i('swap', 55, [45_000, 90_000], [11, 14]),
      i('twoHopSwap', 20, [90_000, 180_000], [20, 24]),
      i('increaseLiquidity', 7, [60_000, 120_000], [11, 13]),
      i('decreaseLiquidity', 7, [60_000, 120_000], [11, 13]),
      i('collectFees', 8, [25_000, 50_000], [9, 11]),
      i('openPosition', 3, [90_000, 180_000], [10, 12], 2),
    ],
    errors: [
      ['custom program error: 0x1794 (AmountOutBelowMinimum)', 70],
      ['custom program error: 0x1787 (InvalidTickArraySequence)', 20],
      [CU_EXCEEDED, 10],
    ],
  },
  {
    // PumpSwap: graduated memecoins; bot-heavy like pump.fun, a little calmer.
    protocol: 'pump_amm',
    programId: 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA',
    weight: 90,
    failRate: 0.07,
    fee: { prioritized: 0.95, cuPriceMedian: 600_000, cuPriceP99: 40_000_000, cuLimitHeadroom: 2, maxPriorityLamports: 30_000_000 },
    pools: 8000,
    mints: 'pump',
    instructions: [
      i('buy', 45, [35_000, 90_000], [19, 23]),
      i('sell', 45, [33_000, 88_000], [19, 23]),
      i('deposit', 4, [50_000, 100_000], [15, 17]),
      i('withdraw', 4, [50_000, 100_000], [15, 17]),
      i('createPool', 2, [120_000, 250_000], [20, 24], 2),
    ],
    errors: [
      ['custom program error: 0x1774 (ExceededSlippage)', 80],
      ['insufficient funds', 12],
      [CU_EXCEEDED, 8],
    ],
  },
  {
    protocol: 'raydium_cp_swap',
    programId: 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C',
    weight: 60,
    failRate: 0.035,
    fee: { prioritized: 0.85, cuPriceMedian: 200_000, cuPriceP99: 10_000_000, cuLimitHeadroom: 1.6, maxPriorityLamports: 10_000_000 },
    pools: 5000,
    mints: 'market',
    instructions: [
      i('swapBaseInput', 70, [30_000, 80_000], [13, 16]),
      i('swapBaseOutput', 20, [32_000, 85_000], [13, 16]),
      i('deposit', 4, [50_000, 90_000], [13, 16]),
      i('withdraw', 4, [50_000, 90_000], [14, 17]),
      i('initialize', 2, [100_000, 200_000], [20, 24]),
    ],
    errors: [
      ['custom program error: 0x1775 (ExceededSlippage)', 85],
      ['custom program error: 0x1771 (NotApproved)', 5],
      [CU_EXCEEDED, 10],
    ],
  },
  {
    // Legacy aggregator version: old integrations, rarely a priority fee.
    protocol: 'jupiter_v4',
    programId: 'JUP4Fb2cqiRUcaTHdrPC8h2gNsA2ETXiPDD33WcGuJB',
    weight: 20,
    failRate: 0.05,
    fee: { prioritized: 0.35, cuPriceMedian: 10_000, cuPriceP99: 500_000, cuLimitHeadroom: 1.5, maxPriorityLamports: 1_000_000 },
    pools: 1000,
    mints: 'market',
    routesThrough: ['whirlpool', 'raydium_amm_v4', 'meteora_dlmm'],
    instructions: [
      i('route', 60, [90_000, 350_000], [18, 40]),
      i('whirlpoolSwap', 10, [60_000, 150_000], [14, 18]),
      i('raydiumSwap', 15, [60_000, 150_000], [20, 24]),
      i('meteoraSwap', 10, [60_000, 160_000], [16, 20]),
      i('lifinitySwap', 5, [60_000, 140_000], [16, 20]),
    ],
    errors: [
      ['custom program error: 0x1771 (SlippageToleranceExceeded)', 85],
      [CU_EXCEEDED, 15],
    ],
  },
  {
    // The classic AMM: cheapest swap in CU (25.6k measured), sniper bots on new pools.
    protocol: 'raydium_amm_v4',
    programId: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8',
    weight: 40,
    failRate: 0.06,
    fee: { prioritized: 0.9, cuPriceMedian: 400_000, cuPriceP99: 30_000_000, cuLimitHeadroom: 3, maxPriorityLamports: 20_000_000 },
    pools: 6000,
    mints: 'market',
    instructions: [
      i('swapBaseIn', 70, [22_000, 45_000], [20, 22]),
      i('swapBaseOut', 20, [23_000, 46_000], [20, 22]),
      i('deposit', 5, [40_000, 80_000], [17, 19]),
      i('withdraw', 5, [40_000, 80_000], [25, 27]),
    ],
    errors: [
      ['custom program error: 0x1e (ExceededSlippage)', 90],
      [CU_EXCEEDED, 10],
    ],
  },
  {
    protocol: 'meteora_dlmm',
    programId: 'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo',
    weight: 20,
    failRate: 0.03,
    fee: { prioritized: 0.8, cuPriceMedian: 80_000, cuPriceP99: 4_000_000, cuLimitHeadroom: 1.5, maxPriorityLamports: 10_000_000 },
    pools: 3000,
    mints: 'market',
    instructions: [
      i('swap', 80, [50_000, 150_000], [16, 22]),
      i('addLiquidity', 8, [80_000, 200_000], [18, 24]),
      i('removeLiquidity', 8, [80_000, 200_000], [18, 24]),
      i('claimFee', 4, [30_000, 60_000], [13, 15]),
    ],
    errors: [
      ['custom program error: 0x1771 (ExceededAmountSlippageTolerance)', 85],
      [CU_EXCEEDED, 15],
    ],
  },
  {
    // Order book: market makers post and cancel cheaply, many with no priority fee.
    protocol: 'phoenix_v1',
    programId: 'PhoeNiXZ8ByJGLkxNfZRnkUfjvmuYqLR89jjFHGqdXY',
    weight: 8,
    failRate: 0.02,
    fee: { prioritized: 0.4, cuPriceMedian: 2_000, cuPriceP99: 200_000, cuLimitHeadroom: 1.3, maxPriorityLamports: 500_000 },
    pools: 60,
    mints: 'market',
    instructions: [
      i('swap', 60, [20_000, 50_000], [9, 12]),
      i('placeLimitOrder', 30, [15_000, 40_000], [9, 11]),
      i('cancelAllOrders', 10, [10_000, 25_000], [5, 6]),
    ],
    errors: [['custom program error: 0x3 (InvalidOrder)', 100]],
  },
  {
    // Perpetuals: keepers fill orders with steady, moderate fees.
    protocol: 'drift_v2',
    programId: 'dRiftyHA39MWEi3m9aunc5MzRF1JYuBsbn6VPcn33UH',
    weight: 8,
    failRate: 0.06,
    fee: { prioritized: 0.85, cuPriceMedian: 20_000, cuPriceP99: 1_000_000, cuLimitHeadroom: 1.4, maxPriorityLamports: 2_000_000 },
    pools: 80,
    mints: 'market',
    instructions: [
      i('placePerpOrder', 50, [40_000, 120_000], [8, 14]),
      i('fillPerpOrder', 30, [80_000, 250_000], [14, 30]),
      i('deposit', 10, [30_000, 70_000], [10, 14]),
      i('withdraw', 10, [30_000, 70_000], [12, 16]),
    ],
    errors: [
      ['custom program error: 0x1773 (InsufficientCollateral)', 55],
      ['custom program error: 0x17b8 (OrderDoesNotExist)', 35],
      [CU_EXCEEDED, 10],
    ],
  },
  {
    protocol: 'kamino_lending',
    programId: 'KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD',
    weight: 4,
    failRate: 0.03,
    fee: { prioritized: 0.7, cuPriceMedian: 30_000, cuPriceP99: 1_500_000, cuLimitHeadroom: 1.4, maxPriorityLamports: 2_000_000 },
    pools: 150,
    mints: 'market',
    instructions: [
      i('depositReserveLiquidity', 40, [60_000, 140_000], [12, 16]),
      i('borrowObligationLiquidity', 30, [90_000, 200_000], [14, 20]),
      i('repayObligationLiquidity', 30, [70_000, 160_000], [10, 14]),
    ],
    errors: [
      ['custom program error: 0x1779 (ReserveStale)', 50],
      ['custom program error: 0x1783 (BorrowLimitExceeded)', 40],
      [CU_EXCEEDED, 10],
    ],
  },
];
