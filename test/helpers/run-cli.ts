import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The real `trace-rl` executable, as a user runs it. */
export const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `trace-rl ...args` in a child process with `stdin` as its input. */
export function runCli(args: readonly string[], stdin = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
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
