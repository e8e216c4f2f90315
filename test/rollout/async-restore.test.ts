/**
 * The environment contract's asynchronous side (src/env/types.ts): reset and restore may return a
 * promise (an environment whose state lives in a server), release frees each trajectory's last state,
 * and a restore that throws ReplayMismatch skips that continuation and is counted. The environment is
 * the real simulator wrapped to answer asynchronously; the remote kinds (src/env/remote) are the real
 * users and have their own tests over real servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayMismatch } from '../../src/env/errors.ts';
import type { Environment, StepOutcome } from '../../src/env/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves } from '../../src/tree/index.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixedAllocator, sim, treeCounts } from './helpers.ts';

const fast = { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } };

/** The simulator behind promises, with each state boxed so release can be checked once per state handed out. */
class AsyncEnv<S> implements Environment<{ inner: S; released: boolean }> {
  readonly name: string;
  handedOut = 0;
  released = 0;
  restores = 0;
  constructor(
    readonly inner: Environment<S>,
    readonly opts: { mismatchOn?: (prompt: Prompt, turns: readonly Turn[]) => boolean; resetFails?: (prompt: Prompt) => boolean } = {},
  ) {
    this.name = inner.name;
  }
  private async box(state: S | Promise<S>) {
    await new Promise((r) => setImmediate(r));
    this.handedOut++;
    return { inner: await state, released: false };
  }
  reset(prompt: Prompt) {
    if (this.opts.resetFails?.(prompt)) return Promise.reject(new Error('env server http://127.0.0.1:1 refused the session (injected)'));
    return this.box(this.inner.reset(prompt));
  }
  restore(prompt: Prompt, turns: readonly Turn[]) {
    this.restores++;
    if (this.opts.mismatchOn?.(prompt, turns)) return Promise.reject(new ReplayMismatch(prompt.id, turns.length - 1, 'observation', 'a', 'b'));
    return this.box(this.inner.restore(prompt, turns));
  }
  async step(state: { inner: S; released: boolean }, action: Action): Promise<StepOutcome<{ inner: S; released: boolean }>> {
    assert.equal(state.released, false, 'a released state was stepped');
    const o = await this.inner.step(state.inner, action);
    return { ...o, state: { inner: o.state, released: false } };
  }
  release(state: { inner: S; released: boolean }): void {
    assert.equal(state.released, false, 'a state was released twice');
    state.released = true;
    this.released++;
  }
  render(prompt: Prompt): string {
    return this.inner.render(prompt);
  }
  get maxTurns() {
    return this.inner.maxTurns;
  }
}

test('an asynchronous reset and restore give the same trees as the synchronous environment, and every trajectory releases its state once', async () => {
  const run = async (wrap: boolean) => {
    const { env, policy, prompts } = sim(5);
    const e = wrap ? new AsyncEnv(env) : env;
    const res = await runStep({ prompts, env: e as Environment<unknown>, policy, rng: createRng(4), strategy: fixedAllocator(3, 2, 2), settings: fast });
    return { res, env: e };
  };
  const sync = await run(false);
  const wrapped = await run(true);
  assert.deepEqual(wrapped.res.trees, sync.res.trees);
  const a = wrapped.env as AsyncEnv<unknown>;
  const counts = treeCounts(wrapped.res.trees);
  assert.ok(counts.continuation > 0 && a.restores === counts.continuation, 'continuations restored their prefix');
  assert.equal(a.handedOut, counts.bare + counts.continuation);
  assert.equal(a.released, a.handedOut, 'every trajectory released its state');
  assert.deepEqual(wrapped.res.replayMismatches, { byPrompt: {} });
});

test('a prefix whose replay differs: the continuation does not run, its claim is returned, and it is counted per prompt', async () => {
  const { env, policy, prompts } = sim(5);
  const bad = prompts[1]!.id;
  const e = new AsyncEnv(env, { mismatchOn: (p) => p.id === bad });
  const res = await runStep({ prompts, env: e as Environment<unknown>, policy, rng: createRng(4), strategy: fixedAllocator(3, 2, 2), settings: fast });
  const tree = res.trees.find((t) => t.promptId === bad)!;
  assert.ok(
    Object.values(tree.nodes).every((n) => n.origin !== 'continuation'),
    'no continuation of the nondeterministic prompt is in its tree',
  );
  const skipped = res.replayMismatches.byPrompt[bad];
  assert.ok(skipped !== undefined && skipped > 0);
  assert.deepEqual(Object.keys(res.replayMismatches.byPrompt), [bad]);
  assert.match(res.replayMismatches.first!, /not replay-deterministic/);
  const counts = treeCounts(res.trees);
  assert.equal(res.spend.continuation, counts.continuation, 'a skipped continuation spends nothing');
  assert.ok(counts.continuation > 0, 'the other prompts still branch');
  assert.equal(res.progress.failed, 0, 'a mismatch is not a failure of the run');
  assert.equal(e.released, e.handedOut);
});

test('a reset that fails ends the trajectory with an error leaf naming the server', async () => {
  const { env, policy, prompts } = sim(5);
  const bad = prompts[0]!.id;
  const e = new AsyncEnv(env, { resetFails: (p) => p.id === bad });
  const res = await runStep({
    prompts,
    env: e as Environment<unknown>,
    policy,
    rng: createRng(4),
    rootPlan: new Map(prompts.map((p) => [p.id, 2])),
    settings: fast,
  });
  const tree = res.trees.find((t) => t.promptId === bad)!;
  const ends = leaves(tree);
  assert.equal(ends.length, 2);
  for (const leaf of ends) {
    assert.equal(leaf.end, 'error');
    assert.equal(leaf.turn?.error?.code, 'tool_error');
    assert.match(leaf.turn!.error!.message, /^resetting the environment: env server http:\/\/127\.0\.0\.1:1 refused/);
  }
  assert.equal(res.failures.tool_error, 2);
  assert.equal(e.released, e.handedOut, 'states handed out were released; failed resets had none');
});
