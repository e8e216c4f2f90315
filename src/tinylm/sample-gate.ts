/**
 * A guard for batched sampling in node-llama-cpp 3.21 (the pinned version; it reaches into the
 * context's private native handle `_ctx`, so a version bump must re-check it — the test
 * test/tinylm/batched-generation.test.ts fails without it).
 *
 * The race it removes: after a decode whose batch llama.cpp split into micro-batches out of the
 * submitted order (it does with several sequences in one context), llama.cpp puts the output rows
 * back in order lazily, inside the first logits read (`output_reorder`, not thread-safe).
 * node-llama-cpp samples every sequence of the batch at once on libuv worker threads, so two
 * samplers can reorder the rows together and read another sequence's logits: seeded generations
 * then differ from run to run and from the same calls made one at a time (seen here with 16
 * sequences on the committed warm-start model: 4–16 of 16 rollouts diverged).
 *
 * The gate lets the first sample after each decode run alone; once it has finished the rows are
 * in order and the others run in parallel as before.
 */
import type { LlamaContext } from 'node-llama-cpp';

interface NativeContext {
  decodeBatch(): Promise<void>;
  sampleToken(...args: unknown[]): Promise<unknown>;
}

/** Installs the gate on a freshly created context (once). */
export function gateFirstSample(context: LlamaContext): void {
  const native = (context as unknown as { _ctx?: NativeContext })._ctx;
  if (!native || typeof native.decodeBatch !== 'function' || typeof native.sampleToken !== 'function') {
    throw new Error('node-llama-cpp changed its context internals (no _ctx.decodeBatch/sampleToken): re-check src/tinylm/sample-gate.ts for this version');
  }
  const decode = native.decodeBatch.bind(native);
  const sample = native.sampleToken.bind(native);
  // Settles when the first sample after the latest decode has finished (undefined: none started yet).
  let first: Promise<unknown> | undefined;
  // The native methods are read-only prototype properties: shadow them with own properties.
  Object.defineProperty(native, 'decodeBatch', {
    configurable: true,
    value: () => {
      first = undefined;
      return decode();
    },
  });
  Object.defineProperty(native, 'sampleToken', {
    configurable: true,
    value: (...args: unknown[]) => {
      if (first) return first.then(() => sample(...args));
      const p = sample(...args);
      first = p.catch(() => undefined);
      return p;
    },
  });
}
