// The portable stream of both generators (docs/draw-protocol.md §1-§2,
// docs/tile-draw-protocol.md §1): FNV-1a-64, splitmix64, derive_at and PCG32
// (pcg32_srandom_r / pcg32_random_r / pcg32_boundedrand_r), bit-exact with
// boardcore/streams.py. Seeds are BigInt (a uint64 does not fit a Number; a Number is
// taken only when it is a safe integer: exactInteger); the generator's state is held as two
// uint32 halves so that a draw allocates nothing.

const M64 = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MULT_HI = 0x5851f42d; // 6364136223846793005 = 0x5851f42d4c957f2d
const MULT_LO = 0x4c957f2d;
const TWO32 = 4294967296;

/**
 * The exact integer `x` as a BigInt: a BigInt as it is, a Number only when it is a safe
 * integer. Python's streams take ints, exact at any size; a Number past 2^53 - 1 may already
 * be another integer rounded (2 ** 53 + 1 === 2 ** 53), and taking it would silently give
 * another stream, so it is refused (TypeError), as are non-integers and other types.
 * `what` names the value in the message.
 */
export function exactInteger(x, what) {
  if (typeof x === 'bigint') return x;
  if (typeof x === 'number') {
    // the text tilegen's seed_value / index_value give for the same number written out
    if (!Number.isInteger(x)) throw new TypeError(`not an integer: '${x}'`);
    if (!Number.isSafeInteger(x)) {
      throw new TypeError(`not a safe integer: ${x} (a Number past 2^53 - 1 may be another `
        + `integer rounded; give ${what} as a BigInt)`);
    }
    return BigInt(x);
  }
  const shown = typeof x === 'string' ? ` '${x}'` : '';
  throw new TypeError(`${what} must be a BigInt or a safe integer Number, got ${typeof x}`
    + `${shown}`);
}

/** FNV-1a-64 of the UTF-8 bytes of `text` (BigInt). */
export function fnv1a64(text) {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h = ((h ^ BigInt(byte)) * FNV_PRIME) & M64;
  }
  return h;
}

/** splitmix64(x) (BigInt in, BigInt out; x taken mod 2^64, as Python's). */
export function splitmix64(x) {
  let z = (exactInteger(x, 'x') + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  return z ^ (z >> 31n);
}

/** derive_at(name, i) = splitmix64(FNV-1a-64(name) XOR (i mod 2^64)) (BigInt). */
export function deriveAt(name, i) {
  return splitmix64(fnv1a64(name) ^ (exactInteger(i, 'the index') & M64));
}

/** PCG32 (pcg_basic) seeded by pcg32_srandom_r(initstate, initseq), both mod 2^64. */
export class Pcg32 {
  constructor(initstate, initseq) {
    const inc = ((exactInteger(initseq, 'initseq') << 1n) | 1n) & M64;
    this.incHi = Number(inc >> 32n);
    this.incLo = Number(inc & 0xffffffffn);
    this.hi = 0;
    this.lo = 0;
    this._step();
    const s = ((BigInt(this.hi) << 32n) + BigInt(this.lo) + exactInteger(initstate, 'initstate'))
      & M64;
    this.hi = Number(s >> 32n);
    this.lo = Number(s & 0xffffffffn);
    this._step();
  }

  /** state = state * MULT + inc (mod 2^64), on uint32 halves. */
  _step() {
    const lo = this.lo;
    const a0 = lo & 0xffff;
    const a1 = lo >>> 16;
    const b0 = MULT_LO & 0xffff;
    const b1 = MULT_LO >>> 16;
    const mid = a0 * b1 + a1 * b0; // < 2^33: exact in a double
    const low = a0 * b0 + (mid % 65536) * 65536; // < 2^33
    const carry = Math.floor(low / TWO32);
    let hi = a1 * b1 + Math.floor(mid / 65536) + carry;
    hi = (hi + Math.imul(this.hi, MULT_LO) + Math.imul(lo, MULT_HI)) >>> 0;
    const lo2 = (low % TWO32) + this.incLo;
    this.lo = lo2 >>> 0;
    this.hi = (hi + this.incHi + (lo2 >= TWO32 ? 1 : 0)) >>> 0;
  }

  /** pcg32_random_r: the next uint32. */
  next() {
    const hi = this.hi;
    const lo = this.lo;
    this._step();
    const xlo = (((lo >>> 18) | (hi << 14)) ^ lo) >>> 0;
    const xhi = (hi >>> 18) ^ hi;
    const x = ((xlo >>> 27) | (xhi << 5)) >>> 0;
    const rot = hi >>> 27;
    return ((x >>> rot) | (x << ((32 - rot) & 31))) >>> 0;
  }

  /** pcg32_boundedrand_r: uniform in [0, bound), bound in 1 .. 2^32 - 1. */
  bounded(bound) {
    const threshold = (TWO32 - bound) % bound;
    for (;;) {
      const r = this.next();
      if (r >= threshold) return r % bound;
    }
  }

  /** The stream's position, to resume it later with `restore`. */
  snapshot() {
    return [this.hi, this.lo];
  }

  restore(snap) {
    this.hi = snap[0];
    this.lo = snap[1];
  }

  /** The state as a BigInt (tests, and a stream saved to resume a run). */
  get state() {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }
}
