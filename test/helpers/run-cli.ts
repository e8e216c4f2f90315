import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real `trace-rl` executable, as a user runs it. */
export const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `trace-rl ...args` in a child process with `stdin` as its input, `env` over the environment, in `cwd` (default this process's). */
export function runCli(args: readonly string[], stdin = '', env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env }, ...(cwd ? { cwd } : {}) });
  child.stdin.end(stdin);
  return outputOf(child);
}

/** A child's exit code and everything it printed, once it has closed. */
export function outputOf(child: ChildProcess): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `trace-rl serve --model file --port 0 …extra` and resolves with the child and its /v1 base URL once it listens. */
export async function startServe(file: string, extra: readonly string[] = []): Promise<{ child: ChildProcess; baseURL: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--model', file, '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  const baseURL = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /at (http:\/\/\S+\/v1)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return { child, baseURL };
}

export interface BoundedCliRun extends CliRun {
  /** Why the watchdog killed the child (too much memory or time), when it did. */
  killed?: string;
  /** Largest resident set seen, in MB. */
  peakRssMb: number;
}

/** Resident set size of a live process in MB (Linux /proc), or 0 once it is gone. */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Runs `trace-rl ...args` under a watchdog: the child is killed (SIGKILL) as soon as its resident set
 * passes `maxRssMb` or it runs longer than `timeoutMs`, so a test of a memory or time bomb fails
 * quickly and safely on code that does not bound it, instead of taking the machine down.
 */
export function runCliBounded(
  args: readonly string[],
  limits: { maxRssMb: number; timeoutMs: number },
  stdin: string | { file: string } = '',
): Promise<BoundedCliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed: string | undefined;
    let peakRssMb = 0;
    const t0 = Date.now();
    const watch = setInterval(() => {
      const rss = rssMb(child.pid!);
      peakRssMb = Math.max(peakRssMb, rss);
      if (killed === undefined && rss > limits.maxRssMb) killed = `resident set ${Math.round(rss)} MB > ${limits.maxRssMb} MB`;
      else if (killed === undefined && Date.now() - t0 > limits.timeoutMs) killed = `still running after ${limits.timeoutMs} ms`;
      if (killed !== undefined) child.kill('SIGKILL');
    }, 50);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(watch);
      resolve({ code, stdout, stderr, peakRssMb, ...(killed !== undefined ? { killed } : {}) });
    });
    child.stdin.on('error', () => {}); // a child killed (or done) before reading all of its stdin
    if (typeof stdin === 'string') child.stdin.end(stdin);
    else {
      // A file such as /dev/zero never ends: stop reading it when the child is gone.
      const source = createReadStream(stdin.file).on('error', () => {});
      source.pipe(child.stdin);
      child.on('close', () => source.destroy());
    }
  });
}

/** The control token the tests give `serve --control-token-file` (control routes need one). */
export const CONTROL_TOKEN = 'test-control-token-0123456789abcdef';

/** A fresh file holding {@link CONTROL_TOKEN}, for `--control-token-file`. */
export function controlTokenFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'trace-token-')), 'control-token');
  writeFileSync(file, `${CONTROL_TOKEN}\n`);
  return file;
}
