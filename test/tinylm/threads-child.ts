/**
 * Child process of threads.test.ts: one PPO pass of the fixture model with the kernel threads the
 * environment asks for (TRACE_RL_JAX_THREADS), then prints what the parent compares and returns
 * without process.exit (the pool's worker threads must not keep the process alive).
 */
import { createHash } from 'node:crypto';
import { initJax, JAX_THREADS } from '../../src/util/jax.ts';
import { LmTrainer, trajectorySequence } from '../../src/tinylm/index.ts';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { fixture } from './fixtures.ts';

await initJax();
// Counts what the pool is sent (the Web Worker shim's postMessage): 0 means every kernel ran on this thread.
let messages = 0;
const W = (globalThis as { Worker?: { prototype: { postMessage(d: unknown): void } } }).Worker;
if (W) {
  const post = W.prototype.postMessage;
  W.prototype.postMessage = function (this: unknown, d: unknown) {
    messages++;
    post.call(this, d);
  };
}
const { env, tokenizer, model } = fixture({}, 3);
const rows = env.train.slice(0, 6).map((p, i) => {
  const seq = trajectorySequence(tokenizer, p, [
    {
      thought: '',
      action: { type: 'search', input: 'x' },
      text: `<think>t${i}</think>\n<search>${p.question.split(' ')[2]}</search>`,
      observation: formatInformation(env.world.passages.slice(i, i + 2)),
    },
    { thought: '', action: { type: 'answer', input: p.answers[0]! }, text: `<answer>${p.answers[0]}</answer>`, observation: '' },
  ]);
  return { seq, advantages: seq.turn.map((t) => (t < 0 ? 0 : i % 2 ? -1 : 1)) };
});
const trainer = new LmTrainer(model, { gridTokens: 1024 });
const stats = await trainer.fit('ppo', rows, 0.01, { clip: 0.2 });
const w = trainer.weights();
const hash = createHash('sha256');
for (const a of [w.embed, w.output, ...w.layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down])])
  hash.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
trainer.dispose();
const plain = new LmTrainer(model);
const defaultGrid = plain.opts.gridTokens;
plain.dispose();
console.log(JSON.stringify({ threads: JAX_THREADS, messages, steps: stats.steps, loss: stats.loss, weights: hash.digest('hex'), defaultGrid }));
