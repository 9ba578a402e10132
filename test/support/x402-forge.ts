// Hand-built x402 payments for hostile tests: the transaction an attacker would sign instead
// of the official client's (test/fixtures/hostile-x402.json says which tricks). Same shape
// as @x402/svm's client (compute limit, compute price, TransferChecked, memo), every part
// changeable: the amount, the decimals, the fee payer, the compute budget, extra
// instructions and extra signers. The chain is test/support/litesvm-chain.ts.
import { randomBytes } from 'node:crypto';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase64EncodedWireTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type TransactionSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getApproveInstruction, getCloseAccountInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { DECIMALS, type Chain } from './litesvm-chain.ts';

const COMPUTE_BUDGET = address('ComputeBudget111111111111111111111111111111');
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** What the attacker changes; everything left out is what the official client signs. */
export interface Forgery {
  /** Atomic units transferred (default: the requirements' amount). */
  amount?: string;
  /** The amount the payload claims it accepted (default: what is transferred). */
  claimed?: string;
  decimals?: number;
  computeUnits?: number;
  microLamports?: number;
  /** Who pays the fees: the facilitator (default) or the payer, who then signs for it. */
  feePayer?: 'facilitator' | 'payer';
  /** The transfer's authority: the payer (default), or the facilitator's own token account. */
  from?: 'payer' | 'facilitator';
  /** Instructions after the transfer. */
  extra?: ('memo' | 'solFromFeePayer' | 'closePayerAccount' | 'approveDelegate' | 'heapFrame' | 'secondTransfer')[];
  /** Signers added to the memo (each a signature the fee payer pays for). */
  extraSigners?: number;
  /** A blockhash the chain never issued. */
  unknownBlockhash?: boolean;
}

const le = (bytes: number, v: bigint): number[] => Array.from({ length: bytes }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));

export async function forgePayment(chain: Chain, asked: PaymentRequirements, f: Forgery = {}): Promise<PaymentPayload> {
  const feePayerAddress = address(String(asked.extra.feePayer));
  const feePayer: TransactionSigner = f.feePayer === 'payer' ? chain.payer : createNoopSigner(feePayerAddress);
  const authority: TransactionSigner = f.from === 'facilitator' ? createNoopSigner(feePayerAddress) : chain.payer;
  const amount = BigInt(f.amount ?? asked.amount);
  const mint = address(asked.asset);
  const transfer = getTransferCheckedInstruction(
    {
      source: await chain.ata(authority.address, mint),
      mint,
      destination: await chain.ata(address(asked.payTo), mint),
      authority,
      amount,
      decimals: f.decimals ?? DECIMALS,
    },
    { programAddress: TOKEN_PROGRAM_ADDRESS },
  );
  const signers = await Promise.all(Array.from({ length: f.extraSigners ?? 0 }, () => generateKeyPairSigner()));
  const memo: Instruction = {
    programAddress: MEMO,
    accounts: signers.map((s) => ({ address: s.address, role: AccountRole.READONLY_SIGNER, signer: s })),
    data: new TextEncoder().encode(randomBytes(16).toString('hex')),
  } as Instruction;
  const payerAta = await chain.ata(chain.payer.address, mint);
  const extras: Record<NonNullable<Forgery['extra']>[number], () => Instruction> = {
    memo: () => ({ programAddress: MEMO, data: new TextEncoder().encode('second memo') }),
    solFromFeePayer: () => getTransferSolInstruction({ source: createNoopSigner(feePayerAddress), destination: chain.payer.address, amount: 1_000_000n }),
    closePayerAccount: () => getCloseAccountInstruction({ account: payerAta, destination: chain.payer.address, owner: chain.payer }),
    approveDelegate: () => getApproveInstruction({ source: payerAta, delegate: feePayerAddress, owner: chain.payer, amount }),
    heapFrame: () => ({ programAddress: COMPUTE_BUDGET, data: Uint8Array.from([1, ...le(4, 256n * 1024n)]) }),
    secondTransfer: () => transfer,
  };
  const instructions: Instruction[] = [
    { programAddress: COMPUTE_BUDGET, data: Uint8Array.from([2, ...le(4, BigInt(f.computeUnits ?? 20_000))]) },
    { programAddress: COMPUTE_BUDGET, data: Uint8Array.from([3, ...le(8, BigInt(f.microLamports ?? 1))]) },
    transfer,
    memo,
    ...(f.extra ?? []).map((e) => extras[e]()),
  ];
  const blockhash = (f.unknownBlockhash ? getAddressDecoder().decode(randomBytes(32)) : chain.svm.latestBlockhash()) as Blockhash;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 1_000_000n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await partiallySignTransactionMessageWithSigners(message);
  return {
    x402Version: 2,
    accepted: { ...asked, amount: f.claimed ?? amount.toString() },
    payload: { transaction: getBase64EncodedWireTransaction(signed) },
  } as PaymentPayload;
}

/** The same transaction spelled otherwise in base64 (padding changed, or garbage after it): one payment. */
export function respelled(payload: PaymentPayload, how: 'unpadded' | 'trailing'): PaymentPayload {
  const tx = String(payload.payload.transaction);
  const padded = tx.endsWith('=') ? tx : `${tx}=`;
  const spelled = how === 'unpadded' ? (tx.endsWith('=') ? tx.replace(/=+$/, '') : padded) : `${padded}QUFB`;
  return { ...payload, payload: { ...payload.payload, transaction: spelled } };
}

/** Move `amount` of the chain's mint from `from` to `to` (both with token accounts) outside any payment. */
export async function moveTokens(chain: Chain, from: KeyPairSigner, to: Address, amount: bigint): Promise<void> {
  const mint = chain.mint.address;
  await chain.send(from, [
    getTransferCheckedInstruction({
      source: await chain.ata(from.address, mint),
      mint,
      destination: await chain.ata(to, mint),
      authority: from,
      amount,
      decimals: DECIMALS,
    }),
  ]);
}
