// Demo-data profiles of the registry's protocols (DESIGN.md section 5): how often each
// appears, its instruction mix and compute-unit ranges, and how it fails. Real program ids
// and instruction names; the weights are a plausible, skewed market, not measurements.

export interface InstructionProfile {
  name: string;
  weight: number;
  cuMin: number;
  cuMax: number;
}

export interface ProtocolProfile {
  protocol: string;
  programId: string;
  weight: number;
  failRate: number;
  instructions: InstructionProfile[];
  errors: string[];
}

const i = (name: string, weight: number, cuMin: number, cuMax: number): InstructionProfile => ({ name, weight, cuMin, cuMax });

export const PROTOCOL_PROFILES: readonly ProtocolProfile[] = [
  {
    protocol: 'jupiter_v6', programId: 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', weight: 300, failRate: 0.04,
    instructions: [i('route', 30, 90_000, 400_000), i('sharedAccountsRoute', 35, 110_000, 450_000), i('exactOutRoute', 5, 120_000, 420_000),
      i('routeV2', 15, 90_000, 380_000), i('sharedAccountsRouteV2', 14, 100_000, 400_000), i('claim', 1, 15_000, 30_000)],
    errors: ['custom program error: 0x1771 (SlippageToleranceExceeded)', 'custom program error: 0x1788 (InvalidRoutePlan)', 'insufficient funds'],
  },
  {
    protocol: 'pump_fun', programId: '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P', weight: 250, failRate: 0.07,
    instructions: [i('buy', 45, 30_000, 75_000), i('sell', 40, 28_000, 70_000), i('create', 8, 90_000, 160_000),
      i('migrate', 1, 150_000, 300_000), i('buyExactSolIn', 6, 32_000, 78_000)],
    errors: ['custom program error: 0x1772 (TooMuchSolRequired)', 'custom program error: 0x1773 (TooLittleSolReceived)', 'custom program error: 0x1775 (BondingCurveComplete)'],
  },
  {
    protocol: 'raydium_amm_v3', programId: 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK', weight: 100, failRate: 0.03,
    instructions: [i('swap', 50, 40_000, 120_000), i('swapV2', 35, 45_000, 130_000), i('openPositionV2', 4, 120_000, 220_000),
      i('increaseLiquidityV2', 4, 70_000, 140_000), i('decreaseLiquidityV2', 4, 70_000, 140_000), i('closePosition', 3, 20_000, 40_000)],
    errors: ['custom program error: 0x1786 (TooLittleOutputReceived)', 'custom program error: 0x177e (SqrtPriceLimitOverflow)'],
  },
  {
    protocol: 'whirlpool', programId: 'whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc', weight: 100, failRate: 0.03,
    instructions: [i('swap', 55, 35_000, 110_000), i('twoHopSwap', 20, 70_000, 200_000), i('increaseLiquidity', 7, 60_000, 120_000),
      i('decreaseLiquidity', 7, 60_000, 120_000), i('collectFees', 8, 25_000, 50_000), i('openPosition', 3, 90_000, 180_000)],
    errors: ['custom program error: 0x1794 (AmountOutBelowMinimum)', 'custom program error: 0x1787 (InvalidTickArraySequence)'],
  },
  {
    protocol: 'pump_amm', programId: 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA', weight: 90, failRate: 0.05,
    instructions: [i('buy', 45, 35_000, 90_000), i('sell', 45, 33_000, 88_000), i('deposit', 4, 50_000, 100_000),
      i('withdraw', 4, 50_000, 100_000), i('createPool', 2, 120_000, 250_000)],
    errors: ['custom program error: 0x1774 (ExceededSlippage)', 'insufficient funds'],
  },
  {
    protocol: 'raydium_cp_swap', programId: 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C', weight: 60, failRate: 0.03,
    instructions: [i('swapBaseInput', 70, 30_000, 80_000), i('swapBaseOutput', 20, 32_000, 85_000), i('deposit', 4, 50_000, 90_000),
      i('withdraw', 4, 50_000, 90_000), i('initialize', 2, 100_000, 200_000)],
    errors: ['custom program error: 0x1775 (ExceededSlippage)', 'custom program error: 0x1771 (NotApproved)'],
  },
  {
    protocol: 'jupiter_v4', programId: 'JUP4Fb2cqiRUcaTHdrPC8h2gNsA2ETXiPDD33WcGuJB', weight: 20, failRate: 0.05,
    instructions: [i('route', 60, 90_000, 350_000), i('whirlpoolSwap', 10, 60_000, 150_000), i('raydiumSwap', 15, 60_000, 150_000),
      i('meteoraSwap', 10, 60_000, 160_000), i('lifinitySwap', 5, 60_000, 140_000)],
    errors: ['custom program error: 0x1771 (SlippageToleranceExceeded)'],
  },
  {
    protocol: 'raydium_amm_v4', programId: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8', weight: 40, failRate: 0.04,
    instructions: [i('swapBaseIn', 70, 25_000, 60_000), i('swapBaseOut', 20, 26_000, 62_000), i('deposit', 5, 40_000, 80_000), i('withdraw', 5, 40_000, 80_000)],
    errors: ['custom program error: 0x1e (ExceededSlippage)'],
  },
  {
    protocol: 'meteora_dlmm', programId: 'LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo', weight: 20, failRate: 0.03,
    instructions: [i('swap', 80, 50_000, 150_000), i('addLiquidity', 8, 80_000, 200_000), i('removeLiquidity', 8, 80_000, 200_000), i('claimFee', 4, 30_000, 60_000)],
    errors: ['custom program error: 0x1770 (ExceededAmountSlippageTolerance)'],
  },
  {
    protocol: 'phoenix_v1', programId: 'PhoeNiXZ8ByJGLkxNfZRnkUfjvmuYqLR89jjFHGqdXY', weight: 8, failRate: 0.02,
    instructions: [i('swap', 60, 20_000, 50_000), i('placeLimitOrder', 30, 15_000, 40_000), i('cancelAllOrders', 10, 10_000, 25_000)],
    errors: ['custom program error: 0x3 (InvalidOrder)'],
  },
  {
    protocol: 'drift_v2', programId: 'dRiftyHA39MWEi3m9aunc5MzRF1JYuBsbn6VPcn33UH', weight: 8, failRate: 0.06,
    instructions: [i('placePerpOrder', 50, 40_000, 120_000), i('fillPerpOrder', 30, 80_000, 250_000), i('deposit', 10, 30_000, 70_000), i('withdraw', 10, 30_000, 70_000)],
    errors: ['custom program error: 0x1773 (InsufficientCollateral)', 'custom program error: 0x17b8 (OrderDoesNotExist)'],
  },
  {
    protocol: 'kamino_lending', programId: 'KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD', weight: 4, failRate: 0.03,
    instructions: [i('depositReserveLiquidity', 40, 60_000, 140_000), i('borrowObligationLiquidity', 30, 90_000, 200_000), i('repayObligationLiquidity', 30, 70_000, 160_000)],
    errors: ['custom program error: 0x1779 (ReserveStale)', 'custom program error: 0x1783 (BorrowLimitExceeded)'],
  },
];
