import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { FrameTooLarge, readFrames, writeFrame } from './frames.ts';
import type { Progress } from '../events.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, RESULT_FD, type ResultMessage, type StepPartsSpec, type TaskMessage, type WorkerMessage } from './protocol.ts';

/** A worker process failed (died, answered a failure, or sent a bad message); the message names it and what it ran. */
export class StepWorkerError extends Error {
  override name = 'StepWorkerError';
  constructor(
    readonly worker: number,
    message: string,
  ) {
    super(message);
  }
}

export interface WorkerPoolOptions {
  workers: number;
  parts: StepPartsSpec;
  /** Largest message accepted either way (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
}

/** How much of a worker's stderr is kept for the error that reports its death. */
const STDERR_TAIL = 4000;
/** How long a closed worker may take to exit before it is killed. */
const CLOSE_GRACE_MS = 5000;

/**
 * A worker's young generation, MB a semi-space (Node's default is 16). A worker only rolls out, and at
 * 256 requests in flight the requests' own objects fill a 16 MB semi-space between collections: they
 * are copied, promoted and collected again as old. 64 cut the CPU a turn by 4–12 % on bench/scale
 * (`completions` against `completions:young=64`, 4k and 16k trajectories); at most 96 MB more a worker.
 */
const WORKER_SEMI_SPACE_MB = 64;

/** The worker script beside this module, run the way this module runs (TypeScript through tsx in a checkout, JavaScript in the build). */
function workerCommand(): string[] {
  const fromSource = import.meta.url.endsWith('.ts');
  const script = new URL(`./worker-main.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  const young = `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`;
  return fromSource ? [young, '--import', import.meta.resolve('tsx'), fileURLToPath(script)] : [young, fileURLToPath(script)];
}

/** One worker process and the task it runs (one at a time). */
class WorkerProcess {
  private readonly proc: ChildProcess;
  private stderrTail = '';
  private pending?: { resolve: (m: WorkerMessage) => void; reject: (e: Error) => void; what: string; onProgress?: (p: Progress) => void };
  private dead?: Error;
  readonly exited: Promise<void>;

  constructor(
    readonly index: number,
    readonly count: number,
    private readonly maxBytes: number,
  ) {
    this.proc = spawn(process.execPath, workerCommand(), {
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, TRACE_RL_WORKER_MAX_BYTES: String(maxBytes) },
    });
    this.proc.stdin!.on('error', () => undefined);
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (d: string) => (this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL)));
    readFrames(
      this.proc.stdio[RESULT_FD] as Readable,
      maxBytes,
      (m) => this.answer(m as WorkerMessage),
      (e) => this.fail(e instanceof FrameTooLarge ? `sent ${e.message} (a larger share needs more workers, or a larger maxMessageBytes)` : e.message, true),
    );
    this.exited = new Promise((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.once('exit', (code, signal) => {
      const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = this.stderrTail.trim();
      this.fail(`${why}${tail ? `; its stderr ended with:\n${tail}` : ''}`, false);
    });
    this.proc.once('error', (e) => this.fail(`could not start: ${e.message}`, true));
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get name(): string {
    return `worker ${this.index + 1} of ${this.count} (pid ${this.proc.pid ?? '?'})`;
  }

  /** Sends a message and resolves with the worker's answer (its progress reports go to `onProgress`); rejects when it fails or dies first. */
  request(message: unknown, what: string, onProgress?: (p: Progress) => void): Promise<WorkerMessage> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.pending) return Promise.reject(new StepWorkerError(this.index, `${this.name} is still busy with ${this.pending.what}`));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, what, ...(onProgress ? { onProgress } : {}) };
      writeFrame(this.proc.stdin as Writable, message, this.maxBytes).catch((e: Error) => this.fail(`could not be sent ${what}: ${e.message}`, true));
    });
  }

  private answer(m: WorkerMessage): void {
    const p = this.pending;
    if (!p) return this.fail(`sent a message nobody asked for (${m.kind})`, true);
    if (m.kind === 'progress') return p.onProgress?.(m.progress);
    this.pending = undefined;
    if (m.kind === 'failed') {
      p.reject(new StepWorkerError(this.index, `${this.name} failed while running ${p.what}: ${m.message}`));
      return;
    }
    p.resolve(m);
  }

  /** The worker is of no further use: its pending request fails with `why`, and with `kill` the process is ended. */
  private fail(why: string, kill: boolean): void {
    const p = this.pending;
    this.pending = undefined;
    const error = new StepWorkerError(this.index, `${this.name} ${why}${p ? ` while running ${p.what}` : ''}`);
    this.dead ??= error;
    if (kill) this.kill();
    p?.reject(error);
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }

  /** Ends the worker's input: it finishes and exits; killed if it has not after a grace period. */
  async close(): Promise<void> {
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.kill(), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * N worker processes that have built their step parts (StepParts) and take one task each at a time.
 * A pool may serve several steps with the same parts; close it (or kill it) when done.
 */
export class StepWorkerPool {
  private constructor(private readonly procs: WorkerProcess[]) {}

  get size(): number {
    return this.procs.length;
  }

  /** The workers' process ids (for checks that none outlives a failure). */
  get pids(): number[] {
    return this.procs.flatMap((p) => (p.pid !== undefined ? [p.pid] : []));
  }

  /** Resolves once every worker process has exited. */
  async exited(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.exited));
  }

  /** Starts the workers and waits until each has built its parts; if any fails, all are killed and the error names it. */
  static async start(o: WorkerPoolOptions): Promise<StepWorkerPool> {
    if (!Number.isInteger(o.workers) || o.workers < 1) throw new RangeError(`workers must be a positive integer, got ${o.workers}`);
    const maxBytes = o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const procs = Array.from({ length: o.workers }, (_, i) => new WorkerProcess(i, o.workers, maxBytes));
    const pool = new StepWorkerPool(procs);
    try {
      await Promise.all(procs.map((p) => p.request({ kind: 'build', worker: p.index, parts: o.parts }, `the build of its parts from ${o.parts.module}`)));
    } catch (e) {
      pool.kill();
      throw e;
    }
    return pool;
  }

  /** Hands every worker what changed since the last step (StepParts.update) and waits for all; if any fails, all are killed. */
  async update(args: unknown): Promise<void> {
    try {
      await Promise.all(this.procs.map((p) => p.request({ kind: 'update', args }, 'the update of its parts')));
    } catch (e) {
      this.kill();
      throw e;
    }
  }

  /** Runs `task` on worker `index`; `what` names the task in errors (its prompts); `onProgress` hears its counts while it runs. */
  async run(index: number, task: TaskMessage, what: string, onProgress?: (p: Progress) => void): Promise<ResultMessage> {
    const answer = await this.procs[index]!.request(task, what, onProgress);
    if (answer.kind !== 'result') throw new StepWorkerError(index, `${this.procs[index]!.name} answered ${answer.kind} to ${what}`);
    return answer;
  }

  /** Ends every worker at once (cancellation, a failed step): nothing they were running comes back. */
  kill(): void {
    for (const p of this.procs) p.kill();
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.close()));
  }
}
