/**
 * The default code tool: CPython compiled to WebAssembly (pyodide, standard library only unless a
 * package directory is given), in a pool of worker threads. Each worker loads Python once (a cold
 * start of a few seconds) and then runs cells in fresh namespaces. Limits (see pyodide-worker.mjs):
 * memory and output are enforced inside the worker; wall time here — a cell that overruns has its
 * worker terminated and replaced, and its result is a `timeout` observation, so the episode goes on.
 * A worker that hit the memory limit is replaced too (WebAssembly memory never shrinks).
 */
import { Worker } from 'node:worker_threads';
import { DEFAULT_CODE_LIMITS, limitMessage, type CodeLimits, type CodeResult, type CodeTool } from './code-tool.ts';

export interface PyodideToolOptions extends Partial<CodeLimits> {
  /** Worker threads (cells run in parallel up to this). Default 1. */
  workers?: number;
  /**
   * A host directory of pure-Python packages (e.g. `pip install --target DIR sympy mpmath`), copied
   * into each interpreter's in-memory file system at start and put first on sys.path.
   */
  packagesDir?: string;
}

interface WorkerReply {
  id?: number;
  ready?: boolean;
  status?: 'ok' | 'error' | 'memory' | 'output_limit';
  stdout?: string;
  stderr?: string;
  error?: string;
  value?: string;
  ms?: number;
}

interface Job {
  code: string;
  signal?: AbortSignal;
  resolve(r: CodeResult): void;
  reject(e: unknown): void;
}

const WORKER_URL = new URL('./pyodide-worker.mjs', import.meta.url);

/** One worker thread and the cell it is running. */
class Slot {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  job?: { id: number; job: Job; timer?: NodeJS.Timeout; onAbort?: () => void };
  dead = false;

  constructor(limits: CodeLimits, packagesDir: string | undefined, onReply: (slot: Slot, r: WorkerReply) => void, onDeath: (slot: Slot, why: string) => void) {
    this.worker = new Worker(WORKER_URL, {
      workerData: { memoryLimitMb: limits.memoryMb, outputLimitBytes: limits.outputBytes, packagesDir },
      env: {},
      // pyodide's JavaScript side is small; its Python heap is WebAssembly memory, limited in the worker.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', (m: WorkerReply) => (m.ready ? resolve() : reject(new Error('pyodide worker: unexpected first message'))));
      this.worker.once('error', reject);
      this.worker.once('exit', (code) => reject(new Error(`pyodide worker exited during start-up (code ${code})`)));
    });
    // An idle worker must not keep the process alive (a CLI run ends when its work does); a starting
    // worker and a running cell do (the pool refs the worker while a cell runs).
    this.ready.then(
      () => {
        if (!this.job) this.worker.unref();
      },
      () => undefined,
    );
    this.worker.on('message', (m: WorkerReply) => {
      if (!m.ready) onReply(this, m);
    });
    this.worker.on('error', (e) => onDeath(this, e.message));
    this.worker.on('exit', (code) => onDeath(this, `worker exited (code ${code})`));
  }
}

export class PyodideCodeTool implements CodeTool {
  readonly name = 'pyodide';
  readonly limits: CodeLimits;
  private readonly size: number;
  private readonly packagesDir?: string;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;
  /** Workers replaced after a timeout, memory error or crash (for tests and benches). */
  replaced = 0;

  constructor(options: PyodideToolOptions = {}) {
    this.limits = {
      timeoutMs: options.timeoutMs ?? DEFAULT_CODE_LIMITS.timeoutMs,
      memoryMb: options.memoryMb ?? DEFAULT_CODE_LIMITS.memoryMb,
      outputBytes: options.outputBytes ?? DEFAULT_CODE_LIMITS.outputBytes,
    };
    this.size = Math.max(1, options.workers ?? 1);
    this.packagesDir = options.packagesDir;
  }

  /** Starts every worker and waits until Python is loaded in each (otherwise the first cells pay for it). */
  async warmup(): Promise<void> {
    while (this.slots.length < this.size) this.spawn();
    await Promise.all(this.slots.map((s) => s.ready));
  }

  run(code: string, options: { signal?: AbortSignal } = {}): Promise<CodeResult> {
    if (this.closed) return Promise.reject(new Error('pyodide code tool is closed'));
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise((resolve, reject) => {
      this.queue.push({ code, signal: options.signal, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('pyodide code tool closed'));
    await Promise.all(this.slots.splice(0).map((s) => this.kill(s)));
  }

  private spawn(): Slot {
    const slot = new Slot(this.limits, this.packagesDir, (s, r) => this.onReply(s, r), (s, why) => this.onDeath(s, why));
    this.slots.push(slot);
    return slot;
  }

  /** Hands queued cells to idle workers, starting workers up to the pool size. */
  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job && !s.dead);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const job = this.queue.shift()!;
      if (job.signal?.aborted) {
        job.reject(job.signal.reason);
        continue;
      }
      this.start(slot, job);
    }
  }

  private start(slot: Slot, job: Job): void {
    const id = this.nextId++;
    // The clock starts once Python is loaded: a cold start is not the cell's time.
    slot.job = { id, job };
    slot.worker.ref();
    slot.ready.then(
      () => {
        if (slot.job?.id !== id) return;
        slot.job.timer = setTimeout(() => this.abandon(slot, { status: 'timeout', stdout: '', stderr: '', error: limitMessage('timeout', this.limits), ms: this.limits.timeoutMs }), this.limits.timeoutMs);
        slot.worker.postMessage({ id, code: job.code });
      },
      (e: Error) => {
        if (slot.job?.id === id) this.abandon(slot, { status: 'sandbox_error', stdout: '', stderr: '', error: `pyodide failed to start: ${e.message}`, ms: 0 });
      },
    );
    if (job.signal) {
      const onAbort = () => {
        if (slot.job?.id !== id) return;
        clearTimeout(slot.job.timer);
        slot.job = undefined;
        this.replace(slot);
        job.reject(job.signal!.reason);
      };
      job.signal.addEventListener('abort', onAbort, { once: true });
      slot.job.onAbort = onAbort;
    }
  }

  private onReply(slot: Slot, r: WorkerReply): void {
    const current = slot.job;
    if (!current || current.id !== r.id) return;
    this.release(slot);
    const status = r.status ?? 'error';
    const result: CodeResult = { status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ms: r.ms ?? 0 };
    if (r.value !== undefined) result.value = r.value;
    if (status === 'error') result.error = r.error;
    else if (status !== 'ok') result.error = limitMessage(status, this.limits);
    if (status === 'memory') this.replace(slot);
    current.job.resolve(result);
    this.pump();
  }

  private onDeath(slot: Slot, why: string): void {
    if (slot.dead) return;
    slot.dead = true;
    if (slot.job) this.abandon(slot, { status: 'sandbox_error', stdout: '', stderr: '', error: `pyodide worker died: ${why}`, ms: 0 });
    else this.replace(slot);
  }

  /** Ends the slot's cell with `result` and replaces its worker (it may still be running Python). */
  private abandon(slot: Slot, result: CodeResult): void {
    const current = slot.job;
    if (!current) return;
    this.release(slot);
    this.replace(slot);
    current.job.resolve(result);
  }

  private release(slot: Slot): void {
    const current = slot.job;
    if (!current) return;
    clearTimeout(current.timer);
    slot.worker.unref();
    if (current.onAbort) current.job.signal?.removeEventListener('abort', current.onAbort);
    slot.job = undefined;
  }

  private replace(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    void this.kill(slot);
    if (this.closed) return;
    this.replaced++;
    if (this.slots.length < this.size) this.spawn();
    this.pump();
  }

  private async kill(slot: Slot): Promise<void> {
    slot.dead = true;
    slot.worker.removeAllListeners('exit');
    slot.worker.removeAllListeners('error');
    slot.worker.on('error', () => undefined);
    await slot.worker.terminate();
  }
}
