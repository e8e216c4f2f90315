/**
 * A task whose first observation does not fit the policy's context is refused at setup, counted and
 * named (issue 67 item 4), with real components: the world served over AgentGym's protocol by `trace-rl
 * env serve`'s code, one of its tasks given a long question, and the tiny LM on llama.cpp with a
 * 128-token context. The long task is reset once (its first observation is what is measured) and never
 * again: no trajectory is spent on it, the others train; when every task is too long the run fails in
 * one line.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServedEnv } from '../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../src/env/remote/serve/servers.ts';
import { worldKind } from '../../src/env/world/kind.ts';
import { SETUP_REFUSALS_NOTE, readSetupRefusals } from '../../src/record/index.ts';
import { loadRun } from '../../src/report/load-runs.ts';
import { RunStore } from '../../src/store/index.ts';
import { PromptFitError } from '../../src/train/prompt-fit.ts';
import { train } from '../../src/train/index.ts';
import type { Prompt } from '../../src/tree/types.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-context-refusal-'));
after(() => rmSync(root, { recursive: true, force: true }));

const CONTEXT = 128;
const TASKS = 4;
// The fixture's world, so that its vocabulary covers every word the served tasks use.
const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 7, questions: 300 }), { maxTurns: 2 });
const model = writeTemp(fixture({ context: CONTEXT }, 3).model);

/** The question made far longer than the context (the world's own words, so the tiny LM's vocabulary has them). */
const lengthen = (p: Prompt): Prompt => ({
  ...p,
  question: `${p.question} ${world.train
    .map((q) => q.question)
    .slice(0, 30)
    .join(' ')}`,
});

/** The world served over AgentGym's protocol, the tasks at `long` lengthened; resets counted per task. */
async function serveWorld(long: ReadonlySet<number>) {
  const setup = { ...world, train: world.train.map((p, i) => (long.has(i) ? lengthen(p) : p)) };
  const served = new ServedEnv(setup, 'world', { maxSessions: 8 });
  const resets = new Map<unknown, number>();
  const reset = served.reset.bind(served);
  served.reset = (session, params) => {
    resets.set(params.data_idx, (resets.get(params.data_idx) ?? 0) + 1);
    return reset(session, params);
  };
  const server = await serveEnvironment(served, 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  after(() => server.close());
  return { url: server.url, served, resets };
}

const config = (url: string) => ({
  seed: 3,
  steps: 2,
  pool: TASKS,
  engine: { maxTurns: 2, concurrency: 4 },
  strategy: { name: 'grpo', budget: 8 },
  predictor: { useGold: false },
  policy: { kind: 'tiny-lm', model, learningRate: 0.01, epochs: 1 },
  eval: { every: 100 },
  env: { kind: 'agentgym', url, tasks: { from: 0, to: TASKS }, questionAfter: 'Question: ', successThreshold: 0.3, action: { text: 'action' }, sessions: 4 },
});

/** Runs `f` with stderr's lines collected (and not printed). */
async function withStderr<T>(f: () => Promise<T>): Promise<{ value?: T; error?: unknown; lines: string[] }> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l !== ''),
    );
    return true;
  }) as typeof process.stderr.write;
  try {
    return { value: await f(), lines };
  } catch (error) {
    return { error, lines };
  } finally {
    process.stderr.write = write;
  }
}

test('a task whose first observation does not fit the tiny LM’s context is skipped at setup, named and counted; the others train', async () => {
  const { url, served, resets } = await serveWorld(new Set([1]));
  const out = join(root, 'one-long');
  let t = 0;
  const run = await withStderr(() => train({ out, clock: () => t++, config: config(url) }));
  assert.equal(run.error, undefined, String(run.error));
  assert.equal(run.value!.status, 'finished');
  const said = run.lines.filter((l) => /skipped at setup/.test(l));
  assert.equal(said.length, 1, run.lines.join('\n'));
  assert.match(
    said[0]!,
    /^trace-rl: env\.kind agentgym: 1 of 4 tasks skipped at setup: the first observation does not fit policy tiny-lm's context: task "idx-1" takes \d+ tokens \+ 64 for the first turn, more than the context of 128; use a model with a longer context, or shorten the tasks' first observations$/,
  );
  const store = RunStore.open(out, { readonly: true });
  try {
    const trained = new Set(store.steps().flatMap((s) => store.trees(s.step).map((tree) => tree.promptId)));
    assert.deepEqual([...trained].sort(), ['idx-0', 'idx-2', 'idx-3'], 'the long task has no tree; the others do');
    const note = readSetupRefusals(store.note(SETUP_REFUSALS_NOTE));
    assert.equal(note?.tasks, TASKS);
    assert.equal(note?.server, 0);
    assert.equal(note?.context, 1);
    assert.equal(note?.named[0]?.id, 'idx-1');
    assert.ok(note!.named[0]!.tokens + 64 > CONTEXT);
    const envResets = store.steps().reduce((a, s) => a + (s.metrics.env_resets ?? NaN), 0);
    assert.equal(envResets + TASKS, served.counts.resets, 'the server’s resets: one per task at setup, then the run’s');
  } finally {
    store.close();
  }
  assert.equal(resets.get(1), 1, 'the long task was reset once, for its first observation, and never rolled out');
  assert.ok((resets.get(0) ?? 0) > 1, 'the others were rolled out');
  assert.ok(
    loadRun(out).notes.some((n) =>
      /1 of 4 tasks skipped at setup: 1 whose first observation does not fit the policy's context of 128 tokens \("idx-1" \d+ tokens\)/.test(n),
    ),
    'the report notes it',
  );
});

test('when every training task is too long for the context the run fails in one line, before any rollout, and leaves no run behind', async () => {
  const { url, resets } = await serveWorld(new Set([0, 1, 2, 3]));
  const out = join(root, 'all-long');
  const run = await withStderr(() => train({ out, clock: () => 0, config: config(url) }));
  assert.ok(run.error instanceof PromptFitError, String(run.error));
  const message = (run.error as Error).message;
  assert.doesNotMatch(message, /\n/);
  assert.match(
    message,
    /^env\.kind agentgym: all 4 training tasks are too long for policy tiny-lm's context of 128 tokens, none is left to train on; the first: task "idx-0" takes \d+ tokens \+ 64 for the first turn, more than the context of 128; use a model with a longer context, or shorten the tasks' first observations$/,
  );
  assert.deepEqual([...resets.values()], [1, 1, 1, 1], 'one reset per task at setup, no rollout');
  assert.equal(existsSync(join(out, 'run.sqlite')), false, 'a run that never started leaves nothing behind');
});
