/**
 * compare's equal-budget check on stored steps (src/cli/commands/compare-spend.ts): an arm is off when a
 * step left more than one trajectory's worth of its budget unspent, or spent more than one unit over it.
 * The figures are what real runs stored: grpo and trace at the world's 11,500 tokens a step spent
 * 10,947–10,985 (the ledger stops a step when the rest cannot pay for a turn's reservation).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spendProblem, spendSlack } from '../../src/cli/commands/compare-spend.ts';

const engine = { maxTurns: 6, maxTokensPerTurn: 512 };
const config = (unit: string, budget: number) => ({ strategy: { unit, budget }, engine }) as never;
const steps = (key: string, ...spent: number[]) => spent.map((v, step) => ({ step, metrics: { [key]: v } }));

test('a step that spent its budget, to within one trajectory, passes', () => {
  assert.equal(spendProblem(config('trajectories', 24), steps('cost_trajectories', 24, 23, 25)), undefined);
  assert.equal(spendProblem(config('tokens', 11_500), steps('cost_tokens', 10_958, 10_947)), undefined);
  assert.equal(spendProblem(config('turns', 100), steps('cost_turns', 94, 100)), undefined);
  assert.equal(spendSlack(config('tokens', 11_500)), 3072);
});

test('an arm under or over by more is named with its step, what it spent and the budget', () => {
  assert.equal(
    spendProblem(config('trajectories', 24), steps('cost_trajectories', 8, 8)),
    'spent 8 trajectories at step 0 against its budget of 24 (16 under; at most 1 may be left), and 1 more step(s) were off too',
  );
  assert.equal(
    spendProblem(config('trajectories', 24), steps('cost_trajectories', 24, 26)),
    'spent 26 trajectories at step 1 against its budget of 24 (2 over)',
  );
  assert.match(
    spendProblem(config('tokens', 11_500), steps('cost_tokens', 8_000))!,
    /^spent 8000 tokens at step 0 against its budget of 11500 \(3500 under; at most 3072 may be left\)$/,
  );
  assert.equal(spendProblem(config('turns', 100), [{ step: 3, metrics: {} }]), 'stored no turns spent at step 3');
});
