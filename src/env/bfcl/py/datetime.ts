/** The parts of Python's datetime the APIs use: strptime for two formats, and formatting. */
import { PyError, type PyValue, typeName } from './value.ts';

const PARTS: Record<string, string> = {
  Y: '(\\d\\d\\d\\d)',
  m: '(1[0-2]|0[1-9]|[1-9])',
  d: '(3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])',
  H: '(2[0-3]|[0-1]\\d|\\d)',
  M: '([0-5]\\d|\\d)',
  S: '(6[0-1]|[0-5]\\d|\\d)',
};

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** A naive datetime as milliseconds on a proleptic UTC scale (comparisons only). */
export type PyDateTime = number;

/** datetime.strptime(text, format) for formats made of %Y %m %d %H %M %S and literal characters. */
export function strptime(text: PyValue, format: string): PyDateTime {
  if (typeof text !== 'string') throw new PyError('TypeError', `strptime() argument 1 must be str, not ${typeName(text)}`);
  const fields: string[] = [];
  const source = format.replace(/%([YmdHMS])|([.^$*+?()[\]{}|\\])/g, (_, f: string | undefined, lit: string | undefined) => {
    if (f) {
      fields.push(f);
      return PARTS[f] as string;
    }
    return `\\${lit}`;
  });
  const m = new RegExp(`^${source}`, 'i').exec(text);
  if (!m) throw new PyError('ValueError', `time data ${JSON.stringify(text).replace(/^"|"$/g, "'")} does not match format '${format}'`);
  if (m[0].length !== text.length) throw new PyError('ValueError', `unconverted data remains: ${text.slice(m[0].length)}`);
  const v: Record<string, number> = { Y: 1900, m: 1, d: 1, H: 0, M: 0, S: 0 };
  fields.forEach((f, i) => (v[f] = Number((m[i + 1] as string).trim())));
  const month = v.m as number;
  const year = v.Y as number;
  const days = month === 2 && isLeap(year) ? 29 : (DAYS[month - 1] as number);
  if ((v.d as number) > days) throw new PyError('ValueError', 'day is out of range for month');
  if ((v.S as number) > 59) throw new PyError('ValueError', 'second must be in 0..59');
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, v.d as number);
  d.setUTCHours(v.H as number, v.M as number, v.S as number, 0);
  return d.getTime();
}

const two = (n: number): string => String(n).padStart(2, '0');

/** strftime('%Y-%m-%d %H:%M:%S') of a PyDateTime. */
export function formatDateTime(t: PyDateTime): string {
  const d = new Date(t);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** datetime.min and datetime.max. */
export const DATETIME_MIN = Number.MIN_SAFE_INTEGER;
export const DATETIME_MAX = Number.MAX_SAFE_INTEGER;
