// CityHash64 v1.0.2, the function behind ClickHouse's cityHash64() and so behind sig_key
// (tx_rid_by_sig's and ingest_keys' key). The ingest pipeline computes a record's sig_key
// in JS, so that de-duplication sends the engine keys, not signatures to hash
// (ingest/steps/dedupe.ts). test/stored-keys.test.ts checks it against the engine's
// cityHash64 for every length from 0 to 300 bytes.
//
// Why it looks like this: 64-bit values live as high/low 32-bit halves in one Uint32Array
// of "registers", and every helper takes register numbers. BigInt was several times slower,
// and so was passing the halves as arguments: a 32-bit value outside V8's small-integer range
// is allocated on the heap each time it crosses a call that is not inlined, and the garbage
// collector then took most of the time.
//
// The registers belong to one hasher (cityHasher()), not to the module: each thread, and
// each pipeline, hashes with its own, so no state is shared behind a caller's back. The
// helpers are closures over the hasher's registers, which V8 reads as cheaply as it read
// the module's.

/** A CityHash64 hasher: hash() a string or bytes, then read the result's two halves. */
export interface CityHasher {
  /** cityHash64 of the UTF-8 bytes of s; read the result with high() and low(). */
  hash(s: string | Buffer): void;
  /** High 32 bits of the last hash. */
  high(): number;
  /** Low 32 bits of the last hash. */
  low(): number;
}

export function cityHasher(): CityHasher {
  const V = new Uint32Array(64);
  // Register numbers (each names two slots: r = high, r + 1 = low).
  const K0 = 0,
    K1 = 2,
    K2 = 4,
    K3 = 6,
    KM = 8;
  const X = 10,
    Y = 12,
    Z = 14,
    V0 = 16,
    V1 = 18,
    W0 = 20,
    W1 = 22;
  const A = 24,
    B = 26,
    C = 28,
    D = 30,
    T = 32,
    U = 34,
    S = 36,
    P = 38,
    Q = 40,
    E = 42,
    F = 44,
    G = 46,
    H = 48;

  function setK(r: number, hi: number, lo: number): void {
    V[r] = hi;
    V[r + 1] = lo;
  }
  setK(K0, 0xc3a5c85c, 0x97cb3127);
  setK(K1, 0xb492b66f, 0xbe98f273);
  setK(K2, 0x9ae16a3b, 0x2f90404f);
  setK(K3, 0xc949d7c7, 0x509e6557);
  setK(KM, 0x9ddfea08, 0xeb382d69);

  let buf: Buffer = Buffer.alloc(0);

  /** r = Fetch64(buf + off) */
  function ld(r: number, off: number): void {
    V[r + 1] = buf[off]! | (buf[off + 1]! << 8) | (buf[off + 2]! << 16) | (buf[off + 3]! << 24);
    V[r] = buf[off + 4]! | (buf[off + 5]! << 8) | (buf[off + 6]! << 16) | (buf[off + 7]! << 24);
  }

  /** r = Fetch32(buf + off) */
  function ld32(r: number, off: number): void {
    V[r + 1] = buf[off]! | (buf[off + 1]! << 8) | (buf[off + 2]! << 16) | (buf[off + 3]! << 24);
    V[r] = 0;
  }

  /** r = n (a small non-negative integer) */
  function setN(r: number, n: number): void {
    V[r] = 0;
    V[r + 1] = n;
  }

  function mov(d: number, a: number): void {
    V[d] = V[a]!;
    V[d + 1] = V[a + 1]!;
  }

  function add(d: number, a: number, b: number): void {
    const lo = V[a + 1]! + V[b + 1]!;
    V[d] = V[a]! + V[b]! + (lo > 0xffffffff ? 1 : 0);
    V[d + 1] = lo;
  }

  function sub(d: number, a: number, b: number): void {
    const lo = V[a + 1]! - V[b + 1]!;
    V[d] = V[a]! - V[b]! - (lo < 0 ? 1 : 0);
    V[d + 1] = lo;
  }

  function xor(d: number, a: number, b: number): void {
    V[d] = V[a]! ^ V[b]!;
    V[d + 1] = V[a + 1]! ^ V[b + 1]!;
  }

  /** d = low 64 bits of a * b */
  function mul(d: number, a: number, b: number): void {
    const ah = V[a]!,
      al = V[a + 1]!,
      bh = V[b]!,
      bl = V[b + 1]!;
    const a0 = al & 0xffff,
      a1 = al >>> 16,
      b0 = bl & 0xffff,
      b1 = bl >>> 16;
    const p00 = a0 * b0,
      p01 = a0 * b1,
      p10 = a1 * b0;
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    const hi = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
    V[d] = hi + Math.imul(ah, bl) + Math.imul(al, bh);
    V[d + 1] = ((mid & 0xffff) << 16) | (p00 & 0xffff);
  }

  /** d = a rotated right by s, 0 < s < 64, s !== 32 */
  function rot(d: number, a: number, s: number): void {
    const ah = V[a]!,
      al = V[a + 1]!;
    if (s < 32) {
      V[d + 1] = (al >>> s) | (ah << (32 - s));
      V[d] = (ah >>> s) | (al << (32 - s));
    } else {
      const t = s - 32;
      V[d + 1] = (ah >>> t) | (al << (32 - t));
      V[d] = (al >>> t) | (ah << (32 - t));
    }
  }

  /** d = a ^ (a >> 47) */
  function shiftMix(d: number, a: number): void {
    const ah = V[a]!;
    V[d + 1] = V[a + 1]! ^ (ah >>> 15);
    V[d] = ah;
  }

  /** d = HashLen16(u, v) = Hash128to64(uint128(u, v)) */
  function hash16(d: number, u: number, v: number): void {
    xor(H, u, v);
    mul(H, H, KM);
    shiftMix(H, H); // a
    xor(G, v, H);
    mul(G, G, KM);
    shiftMix(G, G);
    mul(d, G, KM);
  }

  /** WeakHashLen32WithSeeds(buf + off, a, b) -> (d1, d2); a and b are clobbered. */
  function weak(d1: number, d2: number, off: number, a: number, b: number): void {
    ld(E, off); // w
    add(a, a, E); // a += w
    add(b, b, a);
    ld(F, off + 24); // z
    add(b, b, F);
    rot(b, b, 21); // b = Rotate(b + a + z, 21)
    mov(G, a); // c = a
    ld(E, off + 8);
    add(a, a, E); // a += x
    ld(E, off + 16);
    add(a, a, E); // a += y
    rot(E, a, 44);
    add(b, b, E); // b += Rotate(a, 44)
    add(d1, a, F); // a + z
    add(d2, b, G); // b + c
  }

  function len0to16(len: number): void {
    if (len > 8) {
      ld(A, 0);
      ld(B, len - 8);
      setN(T, len);
      add(T, B, T);
      rot(T, T, len); // RotateByAtLeast1(b + len, len), 8 < len <= 16
      hash16(U, A, T);
      xor(U, U, B);
      return;
    }
    if (len >= 4) {
      ld32(A, 0);
      // len + (a << 3)
      V[T] = V[A + 1]! >>> 29;
      V[T + 1] = V[A + 1]! << 3;
      setN(S, len);
      add(T, T, S);
      ld32(B, len - 4);
      hash16(U, T, B);
      return;
    }
    if (len > 0) {
      setN(A, buf[0]! + (buf[len >> 1]! << 8));
      setN(B, len + (buf[len - 1]! << 2));
      mul(A, A, K2);
      mul(B, B, K3);
      xor(A, A, B);
      shiftMix(A, A);
      mul(U, A, K2);
      return;
    }
    mov(U, K2);
  }

  function len17to32(len: number): void {
    ld(A, 0);
    mul(A, A, K1);
    ld(B, 8);
    ld(C, len - 8);
    mul(C, C, K2);
    ld(D, len - 16);
    mul(D, D, K0);
    // Rotate(a - b, 43) + Rotate(c, 30) + d
    sub(T, A, B);
    rot(T, T, 43);
    rot(S, C, 30);
    add(T, T, S);
    add(T, T, D);
    // a + Rotate(b ^ k3, 20) - c + len
    xor(S, B, K3);
    rot(S, S, 20);
    add(S, A, S);
    sub(S, S, C);
    setN(P, len);
    add(S, S, P);
    hash16(U, T, S);
  }

  function len33to64(len: number): void {
    ld(Z, 24);
    // a = Fetch64(s) + (len + Fetch64(s + len - 16)) * k0
    setN(A, len);
    ld(T, len - 16);
    add(A, A, T);
    mul(A, A, K0);
    ld(T, 0);
    add(A, A, T);
    add(B, A, Z);
    rot(B, B, 52);
    rot(C, A, 37);
    ld(T, 8);
    add(A, A, T);
    rot(T, A, 7);
    add(C, C, T);
    ld(T, 16);
    add(A, A, T);
    add(P, A, Z); // vf
    rot(T, A, 31);
    add(Q, B, T);
    add(Q, Q, C); // vs
    ld(A, 16);
    ld(T, len - 32);
    add(A, A, T);
    ld(Z, len - 8);
    add(B, A, Z);
    rot(B, B, 52);
    rot(C, A, 37);
    ld(T, len - 24);
    add(A, A, T);
    rot(T, A, 7);
    add(C, C, T);
    ld(T, len - 16);
    add(A, A, T);
    add(X, A, Z); // wf
    rot(T, A, 31);
    add(Y, B, T);
    add(Y, Y, C); // ws
    // r = ShiftMix((vf + ws) * k2 + (wf + vs) * k0)
    add(T, P, Y);
    mul(T, T, K2);
    add(S, X, Q);
    mul(S, S, K0);
    add(T, T, S);
    shiftMix(T, T);
    // ShiftMix(r * k0 + vs) * k2
    mul(T, T, K0);
    add(T, T, Q);
    shiftMix(T, T);
    mul(U, T, K2);
  }

  /** cityHash64 of bytes [0, len) of b, into register U. */
  function city(b: Buffer, len: number): void {
    buf = b;
    if (len <= 16) {
      len0to16(len);
      return;
    }
    if (len <= 32) {
      len17to32(len);
      return;
    }
    if (len <= 64) {
      len33to64(len);
      return;
    }
    ld(X, 0);
    ld(Y, len - 16);
    xor(Y, Y, K1);
    ld(Z, len - 56);
    xor(Z, Z, K0);
    setN(A, len);
    mov(B, Y);
    weak(V0, V1, len - 64, A, B);
    setN(A, len);
    mul(A, A, K1);
    mov(B, K0);
    weak(W0, W1, len - 32, A, B);
    // z += ShiftMix(v.second) * k1
    shiftMix(T, V1);
    mul(T, T, K1);
    add(Z, Z, T);
    // x = Rotate(z + x, 39) * k1
    add(X, Z, X);
    rot(X, X, 39);
    mul(X, X, K1);
    // y = Rotate(y, 33) * k1
    rot(Y, Y, 33);
    mul(Y, Y, K1);
    let n = (len - 1) & ~63;
    let s = 0;
    do {
      // x = Rotate(x + y + v.first + Fetch64(s + 16), 37) * k1
      add(X, X, Y);
      add(X, X, V0);
      ld(T, s + 16);
      add(X, X, T);
      rot(X, X, 37);
      mul(X, X, K1);
      // y = Rotate(y + v.second + Fetch64(s + 48), 42) * k1
      add(Y, Y, V1);
      ld(T, s + 48);
      add(Y, Y, T);
      rot(Y, Y, 42);
      mul(Y, Y, K1);
      xor(X, X, W1);
      xor(Y, Y, V0);
      xor(Z, Z, W0);
      rot(Z, Z, 33);
      // v = Weak(s, v.second * k1, x + w.first); w = Weak(s + 32, z + w.second, y)
      mul(A, V1, K1);
      add(B, X, W0);
      weak(V0, V1, s, A, B);
      add(A, Z, W1);
      mov(B, Y);
      weak(W0, W1, s + 32, A, B);
      mov(T, Z);
      mov(Z, X);
      mov(X, T);
      s += 64;
      n -= 64;
    } while (n !== 0);
    // HashLen16(HashLen16(v.first, w.first) + ShiftMix(y) * k1 + z, HashLen16(v.second, w.second) + x)
    hash16(A, V0, W0);
    shiftMix(T, Y);
    mul(T, T, K1);
    add(A, A, T);
    add(A, A, Z);
    hash16(B, V1, W1);
    add(B, B, X);
    hash16(U, A, B);
  }

  let scratch = Buffer.allocUnsafe(1024);
  return {
    hash(s: string | Buffer): void {
      if (typeof s !== 'string') {
        city(s, s.length);
        return;
      }
      if (s.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(s.length * 3);
      const n = scratch.write(s, 0, 'utf8');
      city(scratch, n);
    },
    high: () => V[U]!,
    low: () => V[U + 1]!,
  };
}

/** cityHash64 of the UTF-8 bytes of s, as a BigInt (tests, SQL comparisons). */
export function cityHash64(s: string | Buffer, hasher: CityHasher = cityHasher()): bigint {
  hasher.hash(s);
  return (BigInt(hasher.high()) << 32n) | BigInt(hasher.low());
}
