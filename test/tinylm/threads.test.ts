import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');

/** Runs threads-child.ts with TRACE_RL_JAX_THREADS = threads; it must exit by itself within a minute. */
async function child(threads: string): Promise<{ threads: number; messages: number; steps: number; loss: number; weights: string; defaultGrid: number }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'threads-child.ts')], {
    cwd: root,
    env: { ...process.env, TRACE_RL_JAX_THREADS: threads },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

test('a PPO pass on the kernel-thread pool gives bit-identical weights to one thread, and the process still exits by itself', async () => {
  // Separate processes: the number of threads is fixed when jax-js is first loaded.
  const [one, two] = await Promise.all([child('1'), child('2')]);
  assert.equal(one.threads, 1);
  assert.equal(one.messages, 0, 'one thread: no worker is ever sent a kernel');
  assert.equal(two.threads, 2);
  assert.ok(two.messages > 0, 'two threads: the kernels went to the pool');
  assert.equal(two.steps, one.steps);
  assert.equal(two.loss, one.loss);
  assert.equal(two.weights, one.weights, 'each kernel’s outputs are split between threads, not its sums: same bits');
  // The pool keeps every buffer a queued kernel uses until it has run, so a grid's whole gradient
  // program is resident at once: half the positions per grid keep the heap where one thread has it.
  assert.deepEqual([one.defaultGrid, two.defaultGrid], [4096, 2048]);
});

test('TRACE_RL_JAX_THREADS must be a whole number of threads', async () => {
  await assert.rejects(child('two'), (e: { stderr: string }) => /TRACE_RL_JAX_THREADS=two: expected a whole number of threads/.test(e.stderr));
});

test('only src/util/jax.ts imports jax-js (the thread shim must be installed before jax-js builds its backend)', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });
  const importers = ['src', 'bench', 'test']
    .flatMap((d) => files(join(root, d)))
    .filter((f) => /from '@jax-js\/jax'|import\('@jax-js\/jax'\)/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(
    importers.map((f) => relative(root, f)),
    ['src/util/jax.ts'],
  );
});

test('the pool is opt-in: unset means one thread, cores means one per core (at most 8)', async () => {
  const { jaxThreads } = await import('../../src/util/wasm-threads.ts');
  const { availableParallelism } = await import('node:os');
  const saved = process.env.TRACE_RL_JAX_THREADS;
  try {
    delete process.env.TRACE_RL_JAX_THREADS;
    assert.equal(jaxThreads(), 1);
    process.env.TRACE_RL_JAX_THREADS = 'cores';
    assert.equal(jaxThreads(), Math.min(8, availableParallelism()));
    process.env.TRACE_RL_JAX_THREADS = '3';
    assert.equal(jaxThreads(), 3);
  } finally {
    if (saved === undefined) delete process.env.TRACE_RL_JAX_THREADS;
    else process.env.TRACE_RL_JAX_THREADS = saved;
  }
});
