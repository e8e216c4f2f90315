/**
 * A kind brings its own features for the embedded policy. In a toy countdown kind the two moves `+3`
 * and `−3` look alike to the policy's generic features (same shape, neither in the question), so a
 * policy without the kind's features cannot learn to prefer one: both logits move together. With the
 * kind's `features` (the move's sign) it learns. The math world's cell features are built the same way
 * (src/env/math/world/features.ts), through its kind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ActionFeatures, CandidateSource } from '../../src/env/types.ts';
import { EmbeddedPolicy } from '../../src/policy/index.ts';
import type { PolicySample } from '../../src/policy/types.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';

const moves: CandidateSource = () => ({ search: [], answer: [], tool: [{ type: 'move', input: '+3' } as Action, { type: 'move', input: '-3' } as Action] });
const sign: ActionFeatures = (_p, _t, a) => [`move|sign=${a.input[0] === '+' ? 'up' : 'down'}`];
const prompt: Prompt = { id: 'c1', question: 'Count down from 10 to 4.', answers: ['4'] };

function learnDown(policy: EmbeddedPolicy): number {
  const turn = (input: string): Turn => ({ action: { type: 'move', input }, observation: '', text: '' }) as Turn;
  // Moving down was right, moving up wrong: advantages +1 and −1, one Adam step each pass.
  const samples: PolicySample[] = [
    { prompt, turns: [turn('-3')], advantages: [1] },
    { prompt, turns: [turn('+3')], advantages: [-1] },
  ];
  for (let i = 0; i < 20; i++) policy.update(samples, { learningRate: 0.1, epochs: 1 });
  const d = policy.distribution(prompt, []);
  return d.probs[d.actions.findIndex((a) => a.input === '-3')]!;
}

test('without the kind’s features the two moves are one to the policy; with them it learns the right one', () => {
  const generic = new EmbeddedPolicy({ candidates: moves, dim: 1 << 12 });
  const d = generic.distribution(prompt, []);
  assert.deepEqual([...d.features[0]!].sort(), [...d.features[1]!].sort(), 'the generic features cannot tell +3 from −3');
  assert.ok(Math.abs(learnDown(generic) - 0.5) < 1e-9, 'so no update can prefer one');
  const own = new EmbeddedPolicy({ candidates: moves, features: sign, dim: 1 << 12 });
  assert.ok(learnDown(own) > 0.9, 'with the kind’s features it learns to move down');
});
