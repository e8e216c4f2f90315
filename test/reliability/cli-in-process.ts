/**
 * Runs the real `trace-rl` program in this process with a given stdin, capturing stdout, stderr and
 * the exit code, so hundreds of malformed inputs can go through the exact CLI code path in seconds
 * (a spawned CLI costs ~1 s to load). Anything `main` throws instead of reporting is a bug and
 * propagates to the caller.
 */
import { Readable } from 'node:stream';
import type { CommandEntry } from '../../src/cli/command-table.ts';
import { main } from '../../src/cli/main.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `table`: the command table main answers help and refusals from (none: the command modules themselves, as in a checkout). */
export async function runCli(args: readonly string[], stdin = '', table?: readonly CommandEntry[]): Promise<CliResult> {
  const stdinDescriptor = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  const write = { out: process.stdout.write, err: process.stderr.write };
  let stdout = '';
  let stderr = '';
  Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from(stdin)]), configurable: true });
  // The CLI writes strings; the test runner reports through stdout in binary frames, which pass through.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) =>
    typeof chunk === 'string'
      ? ((stdout += chunk), true)
      : (write.out as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  process.exitCode = undefined;
  try {
    await main(['node', 'trace-rl', ...args], table);
  } finally {
    Object.defineProperty(process, 'stdin', stdinDescriptor);
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout, stderr };
}
