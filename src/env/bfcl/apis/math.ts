/** MathAPI: stateless arithmetic and statistics; TypeErrors inside become `{"error": ...}` as in BFCL. */
import { decimalSqrt, mpLogRatio } from '../py/mp.ts';
import * as num from '../py/num.ts';
import { pyStr } from '../py/format.ts';
import { dict, isNumber, iterate, PyError, type PyValue, pyEquals, truthy } from '../py/value.ts';
import { type BfclApi, method, type Method } from './api.ts';

const result = (v: PyValue) => dict([['result', v]]);

/**
 * Digits the arbitrary-precision methods compute. BFCL's Python sets `mpmath.mp.dps` / the decimal
 * context to whatever precision the model asks and computes it (the ground truths ask for 2–10);
 * here `logarithm(..., precision=100000)` ran synchronously for over a minute, blocking every other
 * trajectory. Past these (about a second each on this machine) the answer is an error dict, the
 * shape BFCL's own `except` gives a failed computation.
 */
export const PRECISION_LIMITS = { logarithm: 5000, square_root: 100_000 } as const;

const tooPrecise = (precision: number, limit: number) =>
  error(`precision ${precision} is above the ${limit} digits this simulator computes; ask for at most ${limit}`);
const error = (text: string) => dict([['error', text]]);

/** Run `body`; a Python TypeError becomes `{"error": message}` (BFCL's `except TypeError`). */
function catchTypeError(body: () => PyValue, message: string): PyValue {
  try {
    return body();
  } catch (e) {
    if (e instanceof PyError && e.pyType === 'TypeError') return error(message);
    throw e;
  }
}

function extreme(values: PyValue[], op: '<' | '>'): PyValue {
  let best = values[0] as PyValue;
  for (const v of values.slice(1)) if (num.compare(v, best, op)) best = v;
  return best;
}

const TO_METERS: [string, PyValue][] = [
  ['km', 1000n],
  ['m', 1n],
  ['cm', 0.01],
  ['mm', 0.001],
  ['um', 1e-6],
  ['nm', 1e-9],
];

const IMPERIAL: Record<string, number> = {
  cm_to_in: 0.393701,
  in_to_cm: 2.54,
  m_to_ft: 3.28084,
  ft_to_m: 0.3048,
  m_to_yd: 1.09361,
  yd_to_m: 0.9144,
  km_to_miles: 0.621371,
  miles_to_km: 1.60934,
  kg_to_lb: 2.20462,
  lb_to_kg: 0.453592,
  celsius_to_fahrenheit: 1.8,
  fahrenheit_to_celsius: 5 / 9,
};

export class MathAPI implements BfclApi {
  readonly className = 'MathAPI';
  readonly methods: ReadonlyMap<string, Method> = new Map(Object.entries(this.table()));

  state(): [string, PyValue][] {
    return [];
  }

  private table(): Record<string, Method> {
    const both = 'Both inputs must be numbers';
    return {
      logarithm: method(['value', 'base', 'precision'], ({ value, base, precision }) => {
        try {
          if (!isNumber(value!) || !isNumber(base!) || !isNumber(precision!)) throw new PyError('TypeError', 'cannot create mpf');
          const v = typeof value === 'boolean' ? BigInt(value) : value!;
          const b = typeof base === 'boolean' ? BigInt(base) : base!;
          if (num.compare(v, 0n, '<=') || num.compare(b, 0n, '<=')) throw new PyError('ValueError', 'logarithm of a non-positive number');
          if (Number(precision) > PRECISION_LIMITS.logarithm) return tooPrecise(Number(precision), PRECISION_LIMITS.logarithm);
          return result(mpLogRatio(v as bigint | number, b as bigint | number, Number(precision)));
        } catch (e) {
          return error(e instanceof Error ? e.message : String(e));
        }
      }),
      mean: method(['numbers'], ({ numbers }) => {
        if (!truthy(numbers!)) return error('Cannot calculate mean of an empty list');
        return catchTypeError(() => {
          const xs = iterate(numbers!);
          return result(num.truediv(num.sum(xs), BigInt(xs.length)));
        }, 'All elements in the list must be numbers');
      }),
      standard_deviation: method(['numbers'], ({ numbers }) => {
        if (!truthy(numbers!)) return error('Cannot calculate standard deviation of an empty list');
        return catchTypeError(() => {
          const xs = iterate(numbers!);
          const mean = num.truediv(num.sum(xs), BigInt(xs.length));
          const squares = xs.map((x) => {
            const d = num.sub(x, mean);
            return num.mul(d, d);
          });
          const variance = num.truediv(num.sum(squares), BigInt(xs.length));
          if (variance < 0) throw new PyError('ValueError', 'math domain error');
          return result(Math.sqrt(variance));
        }, 'All elements in the list must be numbers');
      }),
      si_unit_conversion: method(['value', 'unit_in', 'unit_out'], ({ value, unit_in, unit_out }) => {
        if (!isNumber(value!)) return error('Value must be a number');
        const toMeters = new Map<PyValue, PyValue>(TO_METERS);
        if (!toMeters.has(unit_in!) || !toMeters.has(unit_out!)) {
          return error(`Conversion from '${pyStr(unit_in!)}' to '${pyStr(unit_out!)}' is not supported`);
        }
        const inMeters = num.mul(value!, toMeters.get(unit_in!) as PyValue);
        return result(num.mul(inMeters, num.truediv(1n, toMeters.get(unit_out!) as PyValue)));
      }),
      imperial_si_conversion: method(['value', 'unit_in', 'unit_out'], ({ value, unit_in, unit_out }) => {
        if (!isNumber(value!)) return error('Value must be a number');
        if (pyEquals(unit_in!, unit_out!)) return result(value!);
        const key = `${pyStr(unit_in!)}_to_${pyStr(unit_out!)}`;
        const factor = IMPERIAL[key];
        if (factor === undefined || !Object.hasOwn(IMPERIAL, key)) {
          return error(`Conversion from '${pyStr(unit_in!)}' to '${pyStr(unit_out!)}' is not supported`);
        }
        if (unit_in === 'celsius' && unit_out === 'fahrenheit') return result(num.add(num.mul(value!, factor), 32n));
        if (unit_in === 'fahrenheit' && unit_out === 'celsius') return result(num.mul(num.sub(value!, 32n), factor));
        return result(num.mul(value!, factor));
      }),
      add: method(['a', 'b'], ({ a, b }) => catchTypeError(() => result(num.add(a!, b!)), both)),
      subtract: method(['a', 'b'], ({ a, b }) => catchTypeError(() => result(num.sub(a!, b!)), both)),
      multiply: method(['a', 'b'], ({ a, b }) => {
        if (!isNumber(a!) || !isNumber(b!)) return error(both);
        return result(num.mul(a!, b!));
      }),
      divide: method(['a', 'b'], ({ a, b }) => catchTypeError(() => (pyEquals(b!, 0n) ? error('Cannot divide by zero') : result(num.truediv(a!, b!))), both)),
      // An int power is sized before it is computed (num.pow): past Python's digit limit it cannot be
      // shown, and that error is BFCL's answer; a float power is bounded by the double's range.
      power: method(['base', 'exponent'], ({ base, exponent }) => catchTypeError(() => result(num.pow(base!, exponent!)), both)),
      square_root: method(['number', 'precision'], ({ number, precision }) =>
        catchTypeError(() => {
          if (num.compare(number!, 0n, '<')) return error('Cannot calculate square root of a negative number');
          if (typeof precision !== 'bigint' || precision < 1n || !isNumber(number!)) {
            return error('Input must be a number or computation resulted in an invalid operation');
          }
          if (precision > BigInt(PRECISION_LIMITS.square_root)) return tooPrecise(Number(precision), PRECISION_LIMITS.square_root);
          const n = typeof number === 'boolean' ? BigInt(number) : (number as bigint | number);
          return result(decimalSqrt(n, Number(precision)));
        }, 'Input must be a number or computation resulted in an invalid operation'),
      ),
      absolute_value: method(['number'], ({ number }) => catchTypeError(() => result(num.abs(number!)), 'Input must be a number')),
      round_number: method(['number', { name: 'decimal_places', fallback: () => 0n }], ({ number, decimal_places }) =>
        catchTypeError(() => {
          if (!isNumber(number!)) throw new PyError('TypeError', 'type does not define __round__');
          return result(num.round(number!, decimal_places!));
        }, 'First input must be a number, second input must be an integer'),
      ),
      percentage: method(['part', 'whole'], ({ part, whole }) =>
        catchTypeError(() => (pyEquals(whole!, 0n) ? error('Whole value cannot be zero') : result(num.mul(num.truediv(part!, whole!), 100n))), both),
      ),
      min_value: method(['numbers'], ({ numbers }) => {
        if (!truthy(numbers!)) return error('Cannot find minimum of an empty list');
        return catchTypeError(() => result(extreme(iterate(numbers!), '<')), 'All elements in the list must be numbers');
      }),
      max_value: method(['numbers'], ({ numbers }) => {
        if (!truthy(numbers!)) return error('Cannot find maximum of an empty list');
        return catchTypeError(() => result(extreme(iterate(numbers!), '>')), 'All elements in the list must be numbers');
      }),
      sum_values: method(['numbers'], ({ numbers }) => {
        if (!truthy(numbers!)) return error('Cannot calculate sum of an empty list');
        return catchTypeError(() => result(num.sum(iterate(numbers!))), 'All elements in the list must be numbers');
      }),
    };
  }
}
