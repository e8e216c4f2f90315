/**
 * jax-js's wasm heap (high-water mark) over tiny-LM PPO steps, on one thread or on the kernel-thread
 * pool: why the pool needs smaller grids (BENCHMARKS.md, "Kernel threads"). The pool's backend keeps
 * every buffer a queued kernel reads or writes until that kernel has run, so a jitted gradient
 * program's intermediates are all resident at once instead of being reused as it goes.
 *
 * Run:  TRACE_RL_JAX_THREADS=1|cores npx tsx bench/tinylm/pool-heap.ts [--grid 4096] [--lengths 500,250,120,500]
 *       [--model bench/tinylm/warm-start-d64x4d.gguf] [--rows 64]
 * Each step trains `rows` random sequences whose longest is about the given length (so steps differ in
 * their row length, as RL steps do) and prints the heap after it.
 */
import { wasmHeapBytes } from '../../test/tinylm/wasm-heap.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LmTrainer, modelFromGguf } from '../../src/tinylm/index.ts';
import { initJax, JAX_THREADS } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    grid: { type: 'string' },
    lengths: { type: 'string', default: '500,250,120,500' },
    model: { type: 'string', default: 'bench/tinylm/warm-start-d64x4d.gguf' },
    rows: { type: 'string', default: '64' },
  },
});
await initJax();
const model = modelFromGguf(new Uint8Array(readFileSync(values.model)));
const trainer = new LmTrainer(model, values.grid ? { gridTokens: Number(values.grid) } : {});
const rng = createRng(1);
const mb = () => `${(wasmHeapBytes() / 2 ** 20).toFixed(0)} MB`;
console.log(`kernel threads ${JAX_THREADS}, grid ${trainer.opts.gridTokens} positions, model ${values.model} (context ${model.config.context})`);
for (const [s, longest] of values.lengths.split(',').map(Number).entries()) {
  const rows = Array.from({ length: Number(values.rows) }, () => {
    const n = Math.max(20, longest - rng.int(Math.floor(longest / 2)));
    const ids = Array.from({ length: n }, () => 1 + rng.int(model.config.vocab - 1));
    // Every third token after a 60-token prompt is "generated" (in the loss), with a ±1 advantage.
    const mask = ids.map((_, i) => (i > 60 && i % 3 === 0 ? 1 : 0));
    return {
      seq: { ids, mask, logprobs: mask.map((m) => (m ? -3 : 0)), turn: mask.map((m) => (m ? 0 : -1)) },
      advantages: ids.map(() => (rng.next() < 0.5 ? 1 : -1)),
    };
  });
  const t = performance.now();
  await trainer.step('ppo', rows, 1e-4);
  console.log(`step ${s} (longest ≤ ${longest}): ${((performance.now() - t) / 1000).toFixed(1)} s, heap ${mb()}`);
}
trainer.dispose();
