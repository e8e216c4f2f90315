/**
 * What every simulated BFCL API class provides to the executor: its public methods with their Python
 * signatures (so calls bind exactly as Python binds them) and its public state (the attributes the
 * checker compares, in Python's attribute order).
 */
import { type PyDict, PyError, type PyValue, typeName } from '../py/value.ts';
import type { SharedState } from './shared.ts';

export type Args = Record<string, PyValue>;

/** A parameter; `fallback` builds the default value at call time (so mutable defaults can be shared on purpose). */
export interface Param {
  name: string;
  fallback?: () => PyValue;
}

export interface Method {
  params: readonly Param[];
  call(args: Args): PyValue;
}

export interface BfclApi {
  readonly className: string;
  /** Public methods by name. */
  readonly methods: ReadonlyMap<string, Method>;
  /** Public attributes (Python `vars()` minus names starting with `_`), in Python's order. */
  state(): [string, PyValue][];
}

export interface ApiContext {
  config: PyDict;
  longContext: boolean;
  shared: SharedState;
  /** Today's date (verify_traveler_information computes an age); from the caller, never the clock here. */
  today: { year: number; month: number; day: number };
}

/** Declare a method: `def name(self, a, b=default)`. A `?` suffix marks an optional parameter with default None. */
export function method(signature: (string | Param)[], call: (args: Args) => PyValue): Method {
  const params = signature.map((p) => (typeof p !== 'string' ? p : p.endsWith('?') ? { name: p.slice(0, -1), fallback: () => null } : { name: p }));
  return { params, call };
}

/** Bind positional and keyword arguments the way CPython does, with its TypeError messages. */
export function bindArgs(qualname: string, m: Method, args: readonly PyValue[], kwargs: readonly [string, PyValue][]): Args {
  const params = m.params;
  const bound: Args = {};
  if (args.length > params.length) {
    const required = params.filter((p) => !p.fallback).length;
    const takes = required === params.length ? `${params.length + 1}` : `from ${required + 1} to ${params.length + 1}`;
    const plural = params.length + 1 === 1 && required === params.length ? 'argument' : 'arguments';
    throw new PyError('TypeError', `${qualname}() takes ${takes} positional ${plural} but ${args.length + 1} were given`);
  }
  args.forEach((v, i) => {
    bound[(params[i] as Param).name] = v;
  });
  for (const [k, v] of kwargs) {
    if (!params.some((p) => p.name === k)) throw new PyError('TypeError', `${qualname}() got an unexpected keyword argument '${k}'`);
    if (Object.hasOwn(bound, k)) throw new PyError('TypeError', `${qualname}() got multiple values for argument '${k}'`);
    bound[k] = v;
  }
  const missing = params.filter((p) => !p.fallback && !Object.hasOwn(bound, p.name)).map((p) => `'${p.name}'`);
  if (missing.length > 0) {
    const list =
      missing.length === 1
        ? missing[0]
        : missing.length === 2
          ? `${missing[0]} and ${missing[1]}`
          : `${missing.slice(0, -1).join(', ')}, and ${missing.at(-1)}`;
    throw new PyError('TypeError', `${qualname}() missing ${missing.length} required positional argument${missing.length > 1 ? 's' : ''}: ${list}`);
  }
  for (const p of params) if (!Object.hasOwn(bound, p.name) && p.fallback) bound[p.name] = p.fallback();
  return bound;
}

/** `dict.get(key, default)` on a scenario config, with the scenario's own value shared (the caller deep-copied it). */
export function configGet(config: PyDict, key: string, fallback: PyValue): PyValue {
  return config.has(key) ? (config.get(key) as PyValue) : fallback;
}

/** Python's AttributeError for calling a str method on something else. */
export function requireStr(v: PyValue, attribute: string): string {
  if (typeof v !== 'string') throw new PyError('AttributeError', `'${typeName(v)}' object has no attribute '${attribute}'`);
  return v;
}

/** `x in some_str`: Python raises for a non-str left operand. */
export function strContains(haystack: string, needle: PyValue): boolean {
  if (typeof needle !== 'string') throw new PyError('TypeError', `'in <string>' requires string as left operand, not ${typeName(needle)}`);
  return haystack.includes(needle);
}
