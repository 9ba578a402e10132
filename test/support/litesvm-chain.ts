// A real Solana runtime in this process for x402 tests: LiteSVM runs the System, SPL Token,
// Associated Token and Memo programs. The chain gets a USDC-like mint (6 decimals), a payer
// funded with it, a payee (the service's pay-to wallet) and a fee payer (the in-process
// facilitator's key). The official x402 client reaches the chain through a small JSON-RPC
// endpoint (getAccountInfo, getLatestBlockhash: all it asks); the in-process facilitator
// through a FacilitatorSvmSigner whose signing is the official one and whose simulate, send
// and confirm are LiteSVM's.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64Decoder,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
  lamports,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { toFacilitatorSvmSigner, TransactionOnchainFailureError, type FacilitatorSvmSigner } from '@x402/svm';

export const DECIMALS = 6;

/** A key pair whose 64 secret bytes we hold (the facilitator's key, as X402_FACILITATOR_SECRET_KEY takes it). */
export function secretKeyBytes(): Uint8Array {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return Uint8Array.from([...seed, ...pub]);
}

const decodeTx = (b64: string): Transaction => getTransactionDecoder().decode(getBase64Encoder().encode(b64));

export class Chain {
  readonly svm = new LiteSVM();
  mint!: KeyPairSigner;
  payer!: KeyPairSigner;
  payee!: KeyPairSigner;
  feePayer!: KeyPairSigner;
  readonly feePayerSecret = secretKeyBytes();
  private server: Server | undefined;
  rpcUrl = '';

  async send(signer: KeyPairSigner, instructions: Instruction[]): Promise<void> {
    const tx = await pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(instructions, m),
      (m) => signTransactionMessageWithSigners(m),
    );
    const r = this.svm.sendTransaction(tx);
    if (r instanceof FailedTransactionMetadata) throw new Error(`set-up transaction failed: ${r.toString()}`);
  }

  async ata(owner: Address, mint: Address = this.mint.address): Promise<Address> {
    return (await findAssociatedTokenPda({ mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  }

  /** A mint of our own (6 decimals), its token accounts for `owners`, and `amount` minted to the first. */
  async createMint(authority: KeyPairSigner, owners: Address[], amount: bigint): Promise<KeyPairSigner> {
    const mint = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    await this.send(authority, [
      getCreateAccountInstruction({
        payer: authority,
        newAccount: mint,
        lamports: this.svm.minimumBalanceForRentExemption(space),
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: DECIMALS, mintAuthority: authority.address }),
    ]);
    for (const owner of owners) {
      await this.send(authority, [await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, mint: mint.address, owner })]);
    }
    await this.send(authority, [
      getMintToInstruction({ mint: mint.address, token: await this.ata(owners[0]!, mint.address), mintAuthority: authority, amount }),
    ]);
    return mint;
  }

  async start(payerTokens: bigint): Promise<this> {
    [this.payer, this.payee] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    this.feePayer = await createKeyPairSignerFromBytes(this.feePayerSecret);
    for (const a of [this.payer.address, this.payee.address, this.feePayer.address]) this.svm.airdrop(a, lamports(10_000_000_000n));
    this.mint = await this.createMint(this.payee, [this.payer.address, this.payee.address], payerTokens);
    this.server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => {
        text += c.toString();
      });
      req.on('end', () => {
        const call = JSON.parse(text) as { id: unknown; method: string; params: unknown[] };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: this.rpc(call.method, call.params) }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.rpcUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The JSON-RPC methods the x402 client calls. */
  private rpc(method: string, params: unknown[]): unknown {
    const context = { slot: Number(this.svm.getClock().slot) };
    if (method === 'getLatestBlockhash') return { context, value: { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: 1_000_000 } };
    if (method === 'getAccountInfo') {
      const acc = this.svm.getAccount(address(String(params[0])));
      if (!acc.exists) return { context, value: null };
      return {
        context,
        value: {
          data: [getBase64Decoder().decode(acc.data), 'base64'],
          executable: acc.executable,
          lamports: Number(acc.lamports),
          owner: acc.programAddress,
          rentEpoch: 0,
          space: acc.data.length,
        },
      };
    }
    throw new Error(`the test chain does not answer ${method}`);
  }

  /** The service's x402 settings to be paid on this chain: in-process facilitator, one atomic
   *  unit per cost unit (so a price reads as the cost model's figure), a floor of 1,000. */
  x402Env(): Record<string, string> {
    return {
      X402_ENABLED: 'true',
      X402_NETWORK: 'solana-devnet',
      X402_PAY_TO: this.payee.address,
      X402_ASSET: this.mint.address,
      X402_FACILITATOR_SECRET_KEY: JSON.stringify([...this.feePayerSecret]),
      X402_PRICE_PER_MILLION_UNITS: '1000000',
      X402_PRICE_FLOOR: '1000',
      // Every test calls from one address, some a hundred times within a minute: the 402 budget
      // per address (120 a minute) has its own tests, which set it low explicitly. Without this,
      // whether a test meets it depended on how fast the machine ran the file (a 429 for a 402).
      X402_REQUIREMENTS_PER_MINUTE: '100000',
    };
  }

  /** Token balance of `owner` in the mint's atomic units (0 without an account). */
  async balance(owner: Address, mint: Address = this.mint.address): Promise<bigint> {
    const acc = this.svm.getAccount(await this.ata(owner, mint));
    return acc.exists ? getTokenDecoder().decode(acc.data).amount : 0n;
  }

  /** The in-process facilitator's chain: official signing, LiteSVM's simulate, send and confirm. */
  signer(feePayer: KeyPairSigner): FacilitatorSvmSigner {
    const official = toFacilitatorSvmSigner(feePayer);
    const svm = this.svm;
    return {
      getAddresses: () => official.getAddresses(),
      signTransaction: (tx, payer, network) => official.signTransaction(tx, payer, network),
      async simulateTransaction(tx) {
        svm.withSigverify(false);
        try {
          const r = svm.simulateTransaction(decodeTx(tx));
          if (r instanceof FailedTransactionMetadata) throw new Error(`simulation failed: ${r.toString()}`);
        } finally {
          svm.withSigverify(true);
        }
      },
      async sendTransaction(tx) {
        const decoded = decodeTx(tx);
        const r = svm.sendTransaction(decoded);
        if (r instanceof FailedTransactionMetadata) throw new Error(`transaction failed: ${r.toString()}`);
        return getSignatureFromTransaction(decoded);
      },
      async confirmTransaction(signature) {
        const r = svm.getTransaction(signature as Signature);
        if (r === null) throw new Error(`transaction ${signature} is not on the chain`);
        if (r instanceof FailedTransactionMetadata) throw new TransactionOnchainFailureError(`transaction ${signature} failed: ${r.toString()}`);
      },
    };
  }

  close(): void {
    this.server?.close();
  }
}
