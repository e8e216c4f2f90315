/**
 * Python's text forms of values, as BFCL's harness shows them to the model:
 * repr()/str() and json.dumps() with its defaults (separators ", " and ": ", ensure_ascii=True).
 */
import { isPyObject, PyError, PySet, PyTuple, type PyValue } from './value.ts';

/**
 * Python's int ↔ decimal text limit (`sys.get_int_max_str_digits()`, 4300 since 3.11): an int with
 * more digits cannot be shown, so BFCL's harness answers with this error instead of the number.
 */
export const INT_MAX_STR_DIGITS = 4300;

export const intTooLongMessage = `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`;

export const LOG10_2 = Math.log10(2);

/** Decimal digits of |v|, at most one too many, from its bit length (no decimal conversion). */
export function decimalDigitsUpperBound(v: bigint): number {
  const bits = bitLength(v);
  return Math.floor(bits * LOG10_2) + 1;
}

/** Bits of |v| (0 for 0), in time linear in its size. */
export function bitLength(v: bigint): number {
  if (v < 0n) v = -v;
  if (v === 0n) return 0;
  const hex = v.toString(16);
  return (hex.length - 1) * 4 + parseInt(hex[0]!, 16).toString(2).length;
}

/** str(int), refusing past {@link INT_MAX_STR_DIGITS} digits before converting, as Python does. */
export function intText(v: bigint): string {
  if (decimalDigitsUpperBound(v) > INT_MAX_STR_DIGITS + 1) throw new PyError('ValueError', intTooLongMessage);
  const text = v.toString();
  if (text.length - (v < 0n ? 1 : 0) > INT_MAX_STR_DIGITS) throw new PyError('ValueError', intTooLongMessage);
  return text;
}

/** repr(float): the shortest digits that round-trip, fixed notation for 1e-4 ≤ |x| < 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const digits = mantissa.replace('.', '');
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || '0'}`;
}

/** The exact decimal value of a finite double as [sign, integer digits, fraction digits]. */
function exactDecimal(x: number): { negative: boolean; int: string; frac: string } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let exp: number;
  if (expBits === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = expBits - 1075;
  }
  if (exp >= 0) return { negative, int: (mant << BigInt(exp)).toString(), frac: '' };
  const places = -exp;
  const scaled = (mant * 5n ** BigInt(places)).toString().padStart(places + 1, '0');
  return { negative, int: scaled.slice(0, -places), frac: scaled.slice(-places) };
}

/** format(x, '.Nf'): correctly rounded, ties to even, like CPython. */
export function formatFixed(x: number, places: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  const { negative, int, frac } = exactDecimal(x);
  const padded = frac.padEnd(places + 1, '0');
  const kept = padded.slice(0, places);
  const rest = frac.slice(places);
  let n = BigInt(int + kept);
  const first = rest.length > 0 ? Number(rest[0]) : 0;
  const tail = rest.slice(1).replace(/0+$/, '');
  if (first > 5 || (first === 5 && (tail.length > 0 || n % 2n === 1n))) n += 1n;
  let text = n.toString().padStart(places + 1, '0');
  if (places > 0) text = `${text.slice(0, -places)}.${text.slice(-places)}`;
  return negative ? `-${text}` : text;
}

/** Python's repr of a str: single quotes unless the text has ' and no ", escapes for non-printables. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x7f || isPrintable(ch)) out += ch;
    else if (cp <= 0xff) out += `\\x${hex(cp, 2)}`;
    else if (cp <= 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + quote;
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const isPrintable = (ch: string): boolean => !NON_PRINTABLE.test(ch);
const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** repr(value). */
export function pyRepr(v: PyValue): string {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return intText(v);
  if (typeof v === 'number') return floatRepr(v);
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (v instanceof PyTuple) {
    const inner = v.items.map(pyRepr).join(', ');
    return v.items.length === 1 ? `(${inner},)` : `(${inner})`;
  }
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  if (v instanceof PySet) return v.items.size === 0 ? 'set()' : `{${[...v.items].map(pyRepr).join(', ')}}`;
  return v.repr();
}

/** str(value): the text itself for a str, repr otherwise. */
export const pyStr = (v: PyValue): string => (typeof v === 'string' ? v : pyRepr(v));

/** Thrown when json.dumps meets a value it cannot encode (the harness then falls back to str()). */
export class NotSerializable extends Error {}

/** json.dumps(value) with Python's defaults. */
export function jsonDumps(v: PyValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return intText(v);
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return floatRepr(v);
  }
  if (typeof v === 'string') return jsonString(v);
  if (Array.isArray(v)) return `[${v.map(jsonDumps).join(', ')}]`;
  if (v instanceof PyTuple) return `[${v.items.map(jsonDumps).join(', ')}]`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${jsonKey(k)}: ${jsonDumps(x)}`).join(', ')}}`;
  if (v instanceof PySet || isPyObject(v)) throw new NotSerializable(`Object of type ${v instanceof PySet ? 'set' : v.pyType} is not JSON serializable`);
  throw new NotSerializable('unknown value');
}

function jsonKey(k: PyValue): string {
  if (typeof k === 'string') return jsonString(k);
  if (k === null || typeof k === 'boolean' || typeof k === 'bigint' || typeof k === 'number') return `"${jsonDumps(k)}"`;
  throw new NotSerializable(`keys must be str, int, float, bool or None, not ${k instanceof PyTuple ? 'tuple' : 'object'}`);
}

/** A JSON string with ensure_ascii: everything outside ' '..'~' escaped, astral characters as surrogate pairs. */
export function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i] as string;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c >= 0x20 && c <= 0x7e) out += ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else out += `\\u${hex(c, 4)}`;
  }
  return out + '"';
}

/** How BFCL's executor turns a method's return value into the text the model sees. */
export function resultText(v: PyValue): string {
  if (typeof v === 'string') return v;
  if (v instanceof Map) {
    try {
      return jsonDumps(v);
    } catch (e) {
      if (e instanceof NotSerializable) return pyRepr(v);
      throw e;
    }
  }
  return pyRepr(v);
}
