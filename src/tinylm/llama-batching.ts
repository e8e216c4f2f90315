/**
 * Fixes to multi-sequence batching in node-llama-cpp 3.21 (the pinned version) and the llama.cpp
 * build it ships. They reach into the context's private fields (`_ctx`, `_queuedDecodes`), so a
 * version bump must re-check them: they throw a named error when those fields are gone, and
 * test/tinylm/batched-generation.test.ts fails without the first one.
 *
 * 1. Batched sampling race (always on). After a decode whose batch llama.cpp split into micro-batches
 *    out of the submitted order, llama.cpp puts the output rows back in order lazily, inside the
 *    first logits read (`output_reorder`, not thread-safe). node-llama-cpp samples every sequence of
 *    the batch at once on libuv worker threads, so two samplers could reorder the rows together and
 *    read another sequence's logits: seeded generations then differed from run to run and from the
 *    same calls made one at a time (4–16 of 16 rollouts on the committed warm-start model). The gate
 *    lets the first sample after each decode run alone; then the rows are in order and the others
 *    run in parallel.
 *
 * 2. Grouped batches (LlamaEngine's default, `batching: 'grouped'`). With one KV stream per sequence
 *    (node-llama-cpp's setting) llama.cpp computes together only sequences whose ids follow each
 *    other in the batch (0, 1, 2, …), and node-llama-cpp lists them in the order their previous
 *    samples finished, so a batch of 15 sequences was mostly computed as 13–15 micro-batches. And a
 *    sequence whose sample finished first was often dispatched alone before the others had queued.
 *    Grouped: every sample of a decode is handed back once all have finished (so all running
 *    sequences queue their next token before the next dispatch), and the batch lists sequences by id.
 */
import type { BatchItem, CustomBatchingPrioritizationStrategy, LlamaContext, PrioritizedBatchItem } from 'node-llama-cpp';

interface ContextInternals {
  _ctx?: { decodeBatch(): Promise<void>; sampleToken(...args: unknown[]): Promise<unknown> };
  _queuedDecodes?: ReadonlyArray<{ sequenceId: number }>;
}

function internalsError(what: string): Error {
  return new Error(`node-llama-cpp changed its context internals (${what}): re-check src/tinylm/llama-batching.ts for this version`);
}

/**
 * Installs the sampling gate on a freshly created context (once); with `together`, each decode's
 * samples are handed back together (fix 2).
 */
export function gateSampling(context: LlamaContext, together: boolean): void {
  const native = (context as unknown as ContextInternals)._ctx;
  if (!native || typeof native.decodeBatch !== 'function' || typeof native.sampleToken !== 'function') throw internalsError('no _ctx.decodeBatch/sampleToken');
  const decode = native.decodeBatch.bind(native);
  const sample = native.sampleToken.bind(native);
  // Settles when the first sample after the latest decode has finished (undefined: none started yet).
  let first: Promise<unknown> | undefined;
  // The samples of the latest decode (all are requested before the first one finishes).
  let group: Array<Promise<unknown>> = [];
  const allSettled = async (g: Array<Promise<unknown>>) => {
    for (let n = -1; n !== g.length;) {
      n = g.length;
      await Promise.allSettled(g.slice());
    }
  };
  // The native methods are read-only prototype properties: shadow them with own properties.
  Object.defineProperty(native, 'decodeBatch', {
    configurable: true,
    value: () => {
      first = undefined;
      group = [];
      return decode();
    },
  });
  Object.defineProperty(native, 'sampleToken', {
    configurable: true,
    value: (...args: unknown[]) => {
      let p: Promise<unknown>;
      if (first) p = first.then(() => sample(...args));
      else {
        p = sample(...args);
        first = p.catch(() => undefined);
      }
      if (!together) return p;
      const g = group;
      g.push(p);
      return allSettled(g).then(() => p);
    },
  });
}

/**
 * The batching strategy listing a batch's sequences by id (fix 2), for
 * `createContext({ batching: { itemPrioritizationStrategy } })`; `context` returns the context once
 * it exists (the strategy is needed to create it).
 */
export function bySequenceId(context: () => LlamaContext | undefined): CustomBatchingPrioritizationStrategy {
  return ({ items, size }) => {
    // node-llama-cpp builds `items` from its queue, in the queue's order.
    const queued = (context() as unknown as ContextInternals | undefined)?._queuedDecodes;
    if (!queued || queued.length !== items.length) throw internalsError('_queuedDecodes');
    const order = items.map((item, i) => ({ item, seq: queued[i]!.sequenceId })).sort((a, b) => a.seq - b.seq);
    return shareSlots(
      order.map((o) => o.item),
      size,
    );
  };
}

/** An even share of `size` token slots for each item (in the given order), leftovers to the first ones still waiting. */
function shareSlots(items: readonly BatchItem[], size: number): PrioritizedBatchItem[] {
  const share = Math.max(1, Math.floor(size / Math.max(1, items.length)));
  let left = size;
  const out = items.map((item) => {
    const processAmount = Math.min(item.tokens.length, share, left);
    left -= processAmount;
    return { item, processAmount };
  });
  for (const o of out) {
    if (left <= 0) break;
    const more = Math.min(o.item.tokens.length - o.processAmount, left);
    o.processAmount += more;
    left -= more;
  }
  // An amount of 0 would be read as 1 by node-llama-cpp: leave such items for the next batch.
  return out.filter((o) => o.processAmount > 0);
}
