/**
 * Python values as BFCL's simulated APIs see them. The official APIs are Python; their results are
 * shown to the model as Python strings (json.dumps of dicts, str() of the rest), so the port keeps the
 * distinctions Python makes and JavaScript does not:
 *   int → bigint, float → number, bool → boolean, None → null, str → string,
 *   list → Array (mutable, shared by reference like Python lists), tuple → PyTuple,
 *   dict → Map (insertion ordered, shared by reference), set → PySet, other objects → PyObject.
 */

export type PyValue = null | boolean | bigint | number | string | PyValue[] | PyTuple | PyDict | PySet | PyObject;
export type PyDict = Map<PyValue, PyValue>;

export class PyTuple {
  constructor(readonly items: readonly PyValue[]) {}
}

/** A set of hashable primitives (the APIs only keep ints in sets). */
export class PySet {
  readonly items = new Set<PyValue>();
  add(value: PyValue): void {
    this.items.add(dictKey(value));
  }
  has(value: PyValue): boolean {
    return this.items.has(dictKey(value));
  }
}

/** Any other Python object: it knows its own repr and equality, and is not JSON serialisable. */
export interface PyObject {
  readonly pyType: string;
  repr(): string;
  equals(other: PyValue): boolean;
}

/** A Python exception raised inside an API method; the harness shows `Error during execution: ${message}`. */
export class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
  }
}

export const isPyObject = (v: PyValue): v is PyObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof PyTuple) && !(v instanceof PySet);

/** Python treats 3 and 3.0 as the same key; keep integral keys as bigint so lookups agree. */
export function dictKey(key: PyValue): PyValue {
  if (typeof key === 'number' && Number.isInteger(key)) return BigInt(key);
  if (typeof key === 'boolean') return key ? 1n : 0n;
  return key;
}

export const dict = (entries: [string, PyValue][] = []): PyDict => new Map(entries);
export const dget = (d: PyDict, key: PyValue): PyValue | undefined => d.get(dictKey(key));
export const dhas = (d: PyDict, key: PyValue): boolean => d.has(dictKey(key));
export function dset(d: PyDict, key: PyValue, value: PyValue): void {
  // Python keeps the first-inserted key object; a Map keyed by the canonical form does the same.
  d.set(dictKey(key), value);
}

export const isInt = (v: PyValue): v is bigint | boolean => typeof v === 'bigint' || typeof v === 'boolean';
export const isNumber = (v: PyValue): v is bigint | boolean | number => isInt(v) || typeof v === 'number';

/** Python's type name, for error messages such as `'int' object has no attribute 'rstrip'`. */
export function typeName(v: PyValue): string {
  if (v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  if (v instanceof PyTuple) return 'tuple';
  if (v instanceof Map) return 'dict';
  if (v instanceof PySet) return 'set';
  return v.pyType;
}

/** Python truthiness. */
export function truthy(v: PyValue): boolean {
  if (v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof PySet) return v.items.size > 0;
  return true;
}

/** Python `==`. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (isNumber(a) && isNumber(b)) return numEquals(a, b);
  if (a === null || b === null) return a === b;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (Array.isArray(a)) return Array.isArray(b) && seqEquals(a, b);
  if (a instanceof PyTuple) return b instanceof PyTuple && seqEquals(a.items, b.items);
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) {
      if (!b.has(k)) return false;
      if (!pyEquals(v, b.get(k) as PyValue)) return false;
    }
    return true;
  }
  if (a instanceof PySet) {
    if (!(b instanceof PySet) || a.items.size !== b.items.size) return false;
    for (const k of a.items) if (!b.items.has(k)) return false;
    return true;
  }
  if (isPyObject(a)) return a.equals(b);
  return false;
}

function seqEquals(a: readonly PyValue[], b: readonly PyValue[]): boolean {
  return a.length === b.length && a.every((x, i) => pyEquals(x, b[i] as PyValue));
}

function numEquals(a: bigint | boolean | number, b: bigint | boolean | number): boolean {
  const x = typeof a === 'boolean' ? (a ? 1n : 0n) : a;
  const y = typeof b === 'boolean' ? (b ? 1n : 0n) : b;
  if (typeof x === 'bigint' && typeof y === 'bigint') return x === y;
  if (typeof x === 'number' && typeof y === 'number') return x === y;
  const f = (typeof x === 'number' ? x : y) as number;
  const i = (typeof x === 'bigint' ? x : y) as bigint;
  return Number.isInteger(f) && BigInt(f) === i;
}

/** copy.deepcopy for plain data (objects are shared: the APIs never deep-copy one). */
export function deepCopy(v: PyValue): PyValue {
  if (Array.isArray(v)) return v.map(deepCopy);
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, deepCopy(x)]));
  if (v instanceof PyTuple) return new PyTuple(v.items.map(deepCopy));
  if (v instanceof PySet) {
    const s = new PySet();
    for (const k of v.items) s.add(k);
    return s;
  }
  return v;
}

/** Convert a plain JS value (from our own code, not user input) into a PyValue; integral numbers become ints. */
export function fromJs(v: unknown): PyValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (Array.isArray(v)) return v.map(fromJs);
  if (v instanceof Map || v instanceof PyTuple || v instanceof PySet) return v as PyValue;
  return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromJs(x)]));
}

/** A float literal written in our own code (fromJs would make 1.0 an int). */
export const float = (x: number): number => x;

/** The items Python's `for x in v` visits (a dict gives its keys, a str its characters). */
export function iterate(v: PyValue): PyValue[] {
  if (Array.isArray(v)) return v;
  if (v instanceof PyTuple) return [...v.items];
  if (typeof v === 'string') return [...v];
  if (v instanceof Map) return [...v.keys()];
  throw new PyError('TypeError', `'${typeName(v)}' object is not iterable`);
}
