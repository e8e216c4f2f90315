import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUN_DB, RunStore } from '../../src/store/index.ts';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Job {
  dir: string;
  /** The resolved configuration (already validated). */
  config: unknown;
}

export interface JobResult {
  dir: string;
  code: number;
  /** Wall seconds of this invocation; null when the run had finished earlier and was reused. */
  wallSeconds: number | null;
}

/**
 * Runs jobs `parallel` at a time, each `train()` in its own child process (worker.ts, one core each):
 * a finished run folder is reused, an unfinished one resumed, so rerunning the bench
 * continues where it stopped. Progress lines go to `log`.
 */
export async function runJobs(jobs: readonly Job[], parallel: number, log: (line: string) => void): Promise<JobResult[]> {
  const queue = [...jobs];
  const results: JobResult[] = [];
  let done = 0;
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const r = await runOne(job);
      results.push(r);
      done++;
      log(
        `[${done}/${jobs.length}] ${job.dir}: ${r.code === 0 ? 'ok' : `exit ${r.code}`}${r.wallSeconds === null ? ' (reused)' : ` in ${r.wallSeconds.toFixed(0)} s`}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
  return results;
}

function runOne(job: Job): Promise<JobResult> {
  let args: string[];
  if (existsSync(join(job.dir, RUN_DB))) {
    const store = RunStore.open(job.dir, { readonly: true });
    const finished = store.status() === 'finished';
    store.close();
    if (finished) return Promise.resolve({ dir: job.dir, code: 0, wallSeconds: null });
    args = [job.dir];
  } else {
    mkdirSync(job.dir, { recursive: true });
    const file = join(job.dir, 'config.json');
    writeFileSync(file, JSON.stringify(job.config, null, 2));
    args = [job.dir, file];
  }
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.on('exit', (code, signal) => {
      const c = code ?? (signal ? 1 : 0);
      if (c !== 0) process.stderr.write(`${job.dir} failed:\n${err}\n`);
      resolve({ dir: job.dir, code: c, wallSeconds: (performance.now() - t0) / 1000 });
    });
  });
}
