import { z } from 'zod';
import { UserError } from '../util/user-error.ts';

/** A user-facing error: printed as one line on stderr, exit code 2, nothing on stdout. */
export class UsageError extends UserError {
  override name = 'UsageError';
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Formats a zod error as one line: `field.path: message; other.path: message`. */
export function formatZodError(error: z.ZodError, where = 'input'): string {
  return error.issues
    .map((i) => `${where}${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`)
    .join('; ');
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
