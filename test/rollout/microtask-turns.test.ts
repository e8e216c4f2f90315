/**
 * How many turns of the microtask queue the engine takes between a policy's answer and the tool step it
 * leads to, and between the tool's answer and the next policy call. Under priced budgets the order in
 * which concurrent calls settle decides admissions, so a change to the engine's layers that moves these
 * counts may change the trees that follow: the golden runs (test/train/golden.test.ts) and the priced
 * plan's independence of the concurrency (budget-units.test.ts) say whether it did. The counts are
 * those of one async function for a policy call's retries (callPolicy), one for a tool step's (stepEnv)
 * and one for an episode's turns (Episode.run), since 2026-12-08; with an async function per layer
 * before, they were 6 and 10.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Environment, StepOutcome } from '../../src/env/types.ts';
import { PolicyCallError } from '../../src/policy/errors.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../../src/policy/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

/** A microtask that re-queues itself: `turns` counts the passes through the queue while it runs. */
function spinner() {
  const s = { turns: 0, running: true };
  const spin = () => {
    s.turns++;
    if (s.running) queueMicrotask(spin);
  };
  queueMicrotask(spin);
  return s;
}

type State = { searches: number };

/** Measures, per turn, the turns of the queue from a policy answer to its tool step and from the tool's answer to the next call. */
async function measure(fail?: (ctx: PolicyContext) => Error | undefined, trajectories = 1) {
  const log: string[] = [];
  let spin = spinner();
  let mark = 0;
  const answered = (what: string) => {
    spin.running = false;
    spin = spinner();
    mark = spin.turns;
    log.push(what);
  };
  const seen = (what: string) => log.push(`${what}+${spin.turns - mark}`);
  const policy: Policy = {
    name: 'counted',
    act(ctx: PolicyContext): Promise<PolicyOutput> {
      seen('act');
      const error = fail?.(ctx);
      // The answer settles at a known point: the spinner starts counting there.
      return Promise.resolve().then(() => {
        answered(error ? 'failed' : 'answered');
        if (error) throw error;
        const text = ctx.turns.length < 2 ? '<search> q </search>' : '<answer> 1 </answer>';
        return { text, generatedTokens: 3 };
      });
    },
  };
  const env: Environment<State> = {
    name: 'counted',
    maxTurns: 5,
    reset: () => ({ searches: 0 }),
    render: (p: Prompt) => p.question,
    restore: (_p: Prompt, turns: readonly Turn[]) => ({ searches: turns.length }),
    step(state: State, action: Action): Promise<StepOutcome<State>> {
      seen('step');
      return Promise.resolve().then(() => {
        answered('stepped');
        if (action.type === 'answer') return { state, observation: '', done: true, reward: 1, score: 1, reason: 'answer' as const };
        return { state: { searches: state.searches + 1 }, observation: 'obs', done: false };
      });
    },
  };
  const prompts = [{ id: 'p', question: 'q?', answers: ['1'] }];
  // One request slot: a second trajectory waits for the first to end. No backoff: sleep(0) settles at once.
  await runStep({
    prompts,
    env,
    policy,
    rng: createRng(1),
    rootPlan: new Map([['p', trajectories]]),
    settings: { concurrency: 1, maxTurns: 5, maxTokensPerTurn: 8, timeoutMs: 60_000, retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 } },
  });
  spin.running = false;
  return log;
}

test('microtask turns from a policy answer to its tool step and from a tool answer to the next call', async () => {
  const log = await measure();
  assert.deepEqual(log, ['act+1', 'answered', 'step+4', 'stepped', 'act+6', 'answered', 'step+4', 'stepped', 'act+6', 'answered', 'step+4', 'stepped']);
});

test('microtask turns from a failed attempt to its retry, and from a call that failed for good to the next trajectory’s first call', async () => {
  // The second turn's first attempt fails and is retried (after a backoff of 0 ms).
  const retried = await measure((ctx) =>
    ctx.turns.length === 1 && ctx.callId?.endsWith('#1') ? new PolicyCallError('server_error', 'down', true) : undefined,
  );
  assert.deepEqual(retried.slice(4, 9), ['act+6', 'failed', 'act+6', 'answered', 'step+4']);
  // Each trajectory's first call fails and is not retried: the next trajectory takes the slot.
  const ended = await measure((ctx) => (ctx.turns.length === 0 ? new PolicyCallError('server_error', 'bad request', false) : undefined), 2);
  assert.deepEqual(ended, ['act+1', 'failed', 'act+4', 'failed']);
});
