/**
 * The two arbitrary-precision results of BFCL's MathAPI, with their Python text forms:
 * - `logarithm`: mpmath at `dps` decimal digits: ln(value) and ln(base) each rounded to the working
 *   precision in bits, their quotient rounded again, shown as `mpf('…')` with mpmath's repr digits.
 * - `square_root`: decimal.Decimal(number).sqrt() at `prec` significant digits, shown as `Decimal('…')`.
 * Computed with BigInt fixed-point arithmetic (ln by the atanh series with 80 guard bits), so the
 * digits agree with mpmath/decimal except when a value lies within ~2^-80 of a rounding boundary.
 */
import type { PyObject, PyValue } from './value.ts';

const LOG2_10 = Math.log(10) / Math.log(2);

/** A binary float m · 2^e with m ≥ 0 and a sign. */
interface Bin {
  negative: boolean;
  man: bigint;
  exp: number;
}

const bitLength = (n: bigint): number => (n === 0n ? 0 : n.toString(2).length);

/** An exact binary value from a Python int or float. */
export function toBin(v: bigint | number): Bin {
  if (typeof v === 'bigint') return { negative: v < 0n, man: v < 0n ? -v : v, exp: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let man = bits & ((1n << 52n) - 1n);
  let exp = -1074;
  if (expBits !== 0) {
    man |= 1n << 52n;
    exp = expBits - 1075;
  }
  return { negative: bits >> 63n === 1n, man, exp };
}

/** Round to `prec` significant bits, ties to even; strips trailing zero bits like mpmath's normalize. */
function roundBits(b: Bin, prec: number, sticky = false): Bin {
  let { man, exp } = b;
  if (man === 0n) return { negative: false, man: 0n, exp: 0 };
  const shift = bitLength(man) - prec;
  if (shift > 0) {
    const half = 1n << BigInt(shift - 1);
    const rest = man & ((1n << BigInt(shift)) - 1n);
    man >>= BigInt(shift);
    exp += shift;
    if (rest > half || (rest === half && (sticky || (man & 1n) === 1n))) man += 1n;
  }
  while (man > 0n && (man & 1n) === 0n) {
    man >>= 1n;
    exp += 1;
  }
  return { negative: b.negative, man, exp };
}

/** atanh(z) for a fixed-point z (z · 2^w), |z| < 1/2. */
function atanhFixed(z: bigint, w: number): bigint {
  const one = 1n << BigInt(w);
  const z2 = (z * z) >> BigInt(w);
  let term = z;
  let sum = 0n;
  for (let k = 1n; term !== 0n; k += 2n) {
    sum += term / k;
    term = (term * z2) >> BigInt(w);
  }
  void one;
  return sum;
}

/** ln(x) for x > 0 as a fixed-point integer with w fractional bits. */
function lnFixed(x: Bin, w: number): bigint {
  const k = bitLength(x.man);
  const one = 1n << BigInt(w);
  const y = k - 1 <= w ? x.man << BigInt(w - (k - 1)) : x.man >> BigInt(k - 1 - w); // y in [1, 2)
  const z = ((y - one) << BigInt(w)) / (y + one);
  const lnY = 2n * atanhFixed(z, w);
  const ln2 = 2n * atanhFixed(one / 3n, w);
  return lnY + BigInt(x.exp + k - 1) * ln2;
}

function lnBin(x: Bin, prec: number): Bin {
  if (x.man === 1n << BigInt(bitLength(x.man) - 1) && x.exp + bitLength(x.man) - 1 === 0) return { negative: false, man: 0n, exp: 0 };
  const w = prec + 80 + bitLength(BigInt(Math.abs(x.exp) + 1));
  const l = lnFixed(x, w);
  return roundBits({ negative: l < 0n, man: l < 0n ? -l : l, exp: -w }, prec);
}

function divBin(a: Bin, b: Bin, prec: number): Bin {
  if (b.man === 0n) throw new RangeError('division by zero');
  if (a.man === 0n) return { negative: false, man: 0n, exp: 0 };
  const shift = Math.max(0, prec + 3 + bitLength(b.man) - bitLength(a.man));
  const n = a.man << BigInt(shift);
  const q = n / b.man;
  const r = n % b.man;
  // Append a sticky bit so a remainder breaks ties upward, as exact division would.
  const withSticky = (q << 1n) | (r === 0n ? 0n : 1n);
  return roundBits({ negative: a.negative !== b.negative, man: withSticky, exp: a.exp - b.exp - shift - 1 }, prec);
}

export const dpsToPrec = (dps: number): number => Math.max(1, Math.round((Math.trunc(dps) + 1) * LOG2_10));
const precToDps = (prec: number): number => Math.max(1, Math.round(prec / LOG2_10) - 1);
const reprDps = (prec: number): number => (precToDps(prec) === 15 ? 17 : precToDps(prec) + 3);

/** mpmath's to_str(x, dps) with its defaults (strip zeros, fixed notation near unit magnitude). */
function mpToStr(x: Bin, dps: number): string {
  if (x.man === 0n) return '0.0';
  const sign = x.negative ? '-' : '';
  const bc = bitLength(x.man);
  const bitprec = Math.trunc((dps + 3) * LOG2_10) + 10;
  const fixprec = Math.max(bitprec - x.exp - bc, 0);
  const fixdps = Math.trunc(fixprec / LOG2_10 + 0.5);
  const shift = x.exp + fixprec;
  const sf = shift >= 0 ? x.man << BigInt(shift) : x.man >> BigInt(-shift);
  let digits = ((sf * 10n ** BigInt(fixdps)) >> BigInt(fixprec)).toString();
  let exponent = digits.length - fixdps - 1;
  if (digits.length > dps && '56789'.includes(digits[dps] as string)) {
    digits = digits.slice(0, dps);
    let i = dps - 1;
    while (i >= 0 && digits[i] === '9') i--;
    if (i >= 0) digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + '0'.repeat(dps - i - 1);
    else {
      digits = '1' + '0'.repeat(dps - 1);
      exponent += 1;
    }
  } else digits = digits.slice(0, dps);
  const minFixed = Math.min(-Math.floor(dps / 3), -5);
  let split = 1;
  if (minFixed < exponent && exponent < dps) {
    if (exponent < 0) digits = '0'.repeat(-exponent) + digits;
    else {
      split = exponent + 1;
      if (split > dps) digits += '0'.repeat(split - dps);
    }
    exponent = 0;
  }
  digits = `${digits.slice(0, split)}.${digits.slice(split)}`.replace(/0+$/, '');
  if (digits.endsWith('.')) digits += '0';
  if (exponent === 0) return sign + digits;
  return exponent > 0 ? `${sign}${digits}e+${exponent}` : `${sign}${digits}e${exponent}`;
}

export class Mpf implements PyObject {
  readonly pyType = 'mpf';
  constructor(
    private readonly value: Bin,
    private readonly prec: number,
  ) {}
  repr(): string {
    return `mpf('${mpToStr(this.value, reprDps(this.prec))}')`;
  }
  equals(other: PyValue): boolean {
    return other instanceof Mpf && other.repr() === this.repr();
  }
}

/** mpmath.log(value) / mpmath.log(base) at `dps` decimal digits; both arguments must be positive. */
export function mpLogRatio(value: bigint | number, base: bigint | number, dps: number): Mpf {
  const prec = dpsToPrec(dps);
  const a = lnBin(toBin(value), prec);
  const b = lnBin(toBin(base), prec);
  return new Mpf(divBin(a, b, prec), prec);
}

/** Decimal's text: plain notation when the exponent is ≤ 0 and the adjusted exponent ≥ −6. */
function decimalText(coef: bigint, exp: number): string {
  const digits = coef.toString();
  const adjusted = exp + digits.length - 1;
  if (exp <= 0 && adjusted >= -6) {
    if (exp === 0) return digits;
    const point = digits.length + exp;
    return point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`;
  }
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${mant}E${adjusted >= 0 ? '+' : ''}${adjusted}`;
}

export class PyDecimal implements PyObject {
  readonly pyType = 'Decimal';
  constructor(
    readonly coef: bigint,
    readonly exp: number,
  ) {}
  repr(): string {
    return `Decimal('${decimalText(this.coef, this.exp)}')`;
  }
  equals(other: PyValue): boolean {
    return other instanceof PyDecimal && other.repr() === this.repr();
  }
}

/** floor(sqrt(n)) by Newton's method from above. */
const isqrt = (n: bigint): bigint => {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(bitLength(n) / 2) + 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
};

/** Decimal(number).sqrt() with `prec` significant digits, rounded half-even; exact roots reduced to the ideal exponent. */
export function decimalSqrt(value: bigint | number, prec: number): PyDecimal {
  // Decimal(value) exactly: a float m·2^e with e < 0 is m·5^-e · 10^e.
  const b = toBin(value);
  // Decimal.from_float works from the reduced ratio, so drop trailing zero bits first.
  while (b.man > 0n && (b.man & 1n) === 0n && b.exp < 0) {
    b.man >>= 1n;
    b.exp += 1;
  }
  let coef = b.man;
  let exp = 0;
  if (b.exp >= 0) coef <<= BigInt(b.exp);
  else {
    coef *= 5n ** BigInt(-b.exp);
    exp = b.exp;
  }
  if (coef === 0n) return new PyDecimal(0n, Math.floor(exp / 2));
  const ideal = Math.floor(exp / 2);
  // Scale so the root has prec+1 digits, keeping the exponent even.
  let e = exp;
  let c = coef;
  const target = 2 * (prec + 1);
  let shift = target - c.toString().length;
  if ((e - shift) % 2 !== 0) shift += 1;
  if (shift > 0) c *= 10n ** BigInt(shift);
  else if (shift < 0) c /= 10n ** BigInt(-shift); // only drops digits when the input is longer than 2·prec
  e -= shift;
  const exact = shift >= 0 || coef % 10n ** BigInt(-shift) === 0n;
  const r = isqrt(c);
  let root = r;
  let rootExp = e / 2;
  const isExact = exact && r * r === c;
  // Round to prec digits (half-even; a nonzero remainder breaks ties upward).
  const extra = root.toString().length - prec;
  if (extra > 0) {
    const p = 10n ** BigInt(extra);
    const q = root / p;
    const rem = root % p;
    const half = p / 2n;
    const sticky = !isExact;
    root = rem > half || (rem === half && (sticky || q % 2n === 1n)) ? q + 1n : q;
    rootExp += extra;
    if (root.toString().length > prec) {
      root /= 10n;
      rootExp += 1;
    }
  }
  if (isExact) {
    while (rootExp < ideal && root % 10n === 0n) {
      root /= 10n;
      rootExp += 1;
    }
  }
  return new PyDecimal(root, rootExp);
}
