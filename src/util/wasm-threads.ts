/**
 * jax-js's wasm backend runs a kernel on several threads when the page has Web Workers and
 * SharedArrayBuffer: it splits the kernel's output range over a pool of workers that share the wasm
 * memory. Node 20 has SharedArrayBuffer but no global `Worker` (its threads are `worker_threads`), so
 * jax-js stays on one thread there. This file provides the part of the Web Worker API the backend
 * uses — `new Worker(blobUrl)`, `postMessage`, `onmessage`, `onerror`, and `self` / `postMessage`
 * inside the worker — on top of `worker_threads`, and `navigator.hardwareConcurrency`, which sets the
 * pool's size. jax-js builds its wasm backend when its module is first evaluated, and compiles every
 * kernel for shared memory when `Worker` exists, so the shim must be in place before that or not at all
 * (a backend built without it cannot run kernels compiled with it): util/jax.ts imports this module
 * first and is the only module that imports jax-js.
 *
 * Only arrays read asynchronously (`await a.data()`, `blockUntilReady`) run on the pool; synchronous
 * reads (`dataSync`) keep running kernels on the calling thread, so code that never awaits is unchanged.
 */
import { resolveObjectURL } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { Worker as NodeWorker } from 'node:worker_threads';

/**
 * Runs in each worker thread: gives the backend's worker script the Web Worker globals it expects,
 * loads it from the Blob the main thread passed, and holds messages that arrive before it is loaded.
 */
const BOOT = `
const { parentPort, workerData } = require('node:worker_threads');
globalThis.self = globalThis;
globalThis.postMessage = (data) => parentPort.postMessage(data);
const early = [];
let loaded = false;
parentPort.on('message', (data) => (loaded ? self.onmessage({ data }) : early.push(data)));
workerData.source.text().then((text) => {
  (0, eval)(text);
  loaded = true;
  for (const data of early.splice(0)) self.onmessage({ data });
});
`;

/** A Web Worker made of a `worker_threads` worker; keeps the process alive only while a reply is due. */
class ThreadWorker {
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onerror: ((e: Error) => void) | null = null;
  private readonly thread: NodeWorker;
  private due = 0;

  constructor(url: string | URL) {
    const source = resolveObjectURL(String(url));
    if (!source) throw new Error(`wasm threads: ${String(url)} is not a blob URL of this process`);
    this.thread = new NodeWorker(BOOT, { eval: true, workerData: { source } });
    this.thread.unref();
    this.thread.on('message', (data) => {
      // The backend's protocol answers every message it sends to a worker with exactly one reply.
      if (--this.due === 0) this.thread.unref();
      this.onmessage?.({ data });
    });
    this.thread.on('error', (e) => this.onerror?.(e));
  }

  postMessage(data: unknown): void {
    if (this.due++ === 0) this.thread.ref();
    this.thread.postMessage(data);
  }

  terminate(): Promise<number> {
    return this.thread.terminate();
  }
}

/**
 * Kernel threads jax-js gets: `TRACE_RL_JAX_THREADS` when set (`cores` = one per core, at most 8:
 * each kernel's output range is split over them, more than the cores only adds overhead), else 1.
 * Opt-in, not the default: a tiny-LM RL run ran out of jax-js's 4 GiB wasm heap at its third step with
 * the pool. The cause: the pool's backend keeps every buffer a queued kernel uses until that kernel has
 * run, so a grid's whole gradient program is resident at once (2.35 GB against one thread's 1.50 GB for
 * 4,096 positions of 512-token rows; past 4 GiB for 768-token rows). LmTrainer therefore defaults to
 * 2,048-position grids on the pool (1.95 GB there, measured by bench/tinylm/pool-heap.ts), and the run that crashed now passes; it stays opt-in until a long run has passed too.
 */
export function jaxThreads(): number {
  const set = process.env.TRACE_RL_JAX_THREADS;
  if (set === undefined || set === '') return 1;
  if (set === 'cores') return Math.min(8, availableParallelism());
  const n = Number(set);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new RangeError(`TRACE_RL_JAX_THREADS=${set}: expected a whole number of threads from 1 to 256, or cores (unset = 1)`);
  return n;
}

/**
 * Gives jax-js `threads` kernel threads (no-op for 1, or where the platform already has Web Workers).
 * Returns the number in effect.
 */
export function installWasmThreads(threads: number): number {
  const g = globalThis as { Worker?: unknown; navigator?: { hardwareConcurrency?: number } };
  if (threads <= 1 || g.Worker !== undefined) return g.Worker === undefined ? 1 : (g.navigator?.hardwareConcurrency ?? 1);
  g.Worker = ThreadWorker;
  // Node 21+ has a \`navigator\` like this one (its userAgent starts "Node.js/"); Node 20 has none.
  if (g.navigator === undefined)
    g.navigator = { hardwareConcurrency: threads, userAgent: `Node.js/${process.versions.node.split('.')[0]}` } as { hardwareConcurrency: number };
  return threads;
}

/** The kernel threads of this process's jax-js, fixed when this module is first evaluated. */
export const JAX_THREADS = installWasmThreads(jaxThreads());
