import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Starts the scale bench's scripted server (server.ts) in its own process (on `cpus` through taskset, when given); resolves with the port it printed. */
export async function startServer(tokenizer: string, cpus?: string): Promise<{ port: number; child: ChildProcess }> {
  const server = fileURLToPath(new URL('./server.ts', import.meta.url));
  const args = ['--import', 'tsx', server, '--tokenizer', tokenizer];
  const child = cpus
    ? spawn('taskset', ['-c', cpus, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    lines.on('line', (l) => {
      const m = /^port (\d+)$/.exec(l);
      if (m) resolve(Number(m[1]));
    });
  });
  return { port, child };
}
