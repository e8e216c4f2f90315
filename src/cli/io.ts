import { z } from 'zod';
import { UserError } from '../util/user-error.ts';
import { jsonLines } from '../util/json-lines.ts';
import { DATASET_LIMITS, mib } from '../util/bounded-read.ts';

/** A user-facing error: printed as one line on stderr, exit code 2, nothing on stdout. */
export class UsageError extends UserError {
  override name = 'UsageError';
}

/**
 * All of stdin as text, refused past the dataset limit (256 MiB): `yes | trace-rl
 * grade math` or `< /dev/zero` would otherwise read into memory until the process dies. It stops reading
 * at the limit, so the refusal comes at once, not when the writer gives up.
 */
export async function readStdin(): Promise<string> {
  const maxBytes = DATASET_LIMITS.maxFileBytes;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) throw new UsageError(`stdin: more than ${mib(maxBytes)}; split the input into smaller batches`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Formats a zod error as one line: `field.path: message; other.path: message`. */
export function formatZodError(error: z.ZodError, where = 'input'): string {
  return error.issues.map((i) => `${where}${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`).join('; ');
}

/** Parses stdin as one JSON value; throws UsageError when it is not JSON. */
export async function readStdinRawJson(): Promise<unknown> {
  const text = await readStdin();
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`stdin is not valid JSON: ${(e as Error).message}`);
  }
}

/** Parses JSON from stdin and validates it; throws UsageError naming the field on any problem. */
export async function readStdinJson<T>(schema: z.ZodType<T>): Promise<T> {
  const raw = await readStdinRawJson();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UsageError(formatZodError(parsed.error));
  return parsed.data;
}

export function writeJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

const DECIMAL_INTEGER = /^[+-]?\d+$/;
const DECIMAL_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A flag's whole number, written in decimal digits only: `0x10`, `1e3`, `""` and `" "` are refused
 * (JavaScript's Number() would read them as 16, 1000 and 0).
 */
export function parseInteger(flag: string, text: unknown, range: { min?: number; max?: number } = {}): number {
  const s = String(text);
  const min = range.min ?? Number.MIN_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const n = DECIMAL_INTEGER.test(s) ? Number(s) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} "${s}": expected a whole number in decimal digits${rangeText(min, max)}`);
  return n;
}

/** A flag's number in plain decimal notation (`0.3`, `1e-3`); `""`, `" "`, `0x0`, `Infinity` are refused. */
export function parseDecimal(flag: string, text: unknown, range: { min?: number; max?: number } = {}): number {
  const s = String(text);
  const min = range.min ?? -Number.MAX_VALUE;
  const max = range.max ?? Number.MAX_VALUE;
  const n = DECIMAL_NUMBER.test(s) ? Number(s) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`${flag} "${s}": expected a decimal number${rangeText(min, max)}`);
  return n;
}

/** A port flag: 0 … 65535 (0 = any free port). */
export function parsePort(flag: string, text: unknown): number {
  return parseInteger(flag, text, { min: 0, max: 65535 });
}

function rangeText(min: number, max: number): string {
  const lo = min > -Number.MAX_VALUE && min > Number.MIN_SAFE_INTEGER;
  const hi = max < Number.MAX_VALUE && max < Number.MAX_SAFE_INTEGER;
  if (lo && hi) return ` in [${min}, ${max}]`;
  if (lo) return ` ≥ ${min}`;
  if (hi) return ` ≤ ${max}`;
  return '';
}

/**
 * Reads JSON Lines from stdin, each line validated by `schema`, all before any output: the first bad
 * line is a UsageError naming the line, the field and the `expected` shape (nothing is written then).
 */
export async function readStdinRows<T>(schema: z.ZodType<T>, expected: string): Promise<T[]> {
  const rows: T[] = [];
  for (const { line, value, error } of jsonLines(await readStdin())) {
    if (error !== undefined) throw new UsageError(`stdin line ${line}: not valid JSON (${error})`);
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`stdin line ${line}: ${issue.path.join('.') || 'line'}: ${issue.message}; expected ${expected}`);
    }
    rows.push(parsed.data);
  }
  return rows;
}
