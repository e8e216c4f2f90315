/** The simulator kind (env.kind simulator): prompts with exactly known success probabilities. */
import { atLeastHeldOut, questions, seed, testFraction } from '../kind-fields.ts';
import { envKind, kindObject } from '../kind.ts';
import type { Environment } from '../types.ts';

export const simulatorKind = envKind('simulator', kindObject('simulator', { seed, questions, testFraction }), {
  async build(s, { maxTurns }) {
    const { Simulator } = await import('./simulator.ts');
    const sim = new Simulator({ seed: s.seed, maxTurns });
    const all = sim.prompts(s.questions);
    const nTest = Math.max(1, Math.round(all.length * s.testFraction));
    const test = all.slice(0, nTest);
    return { env: sim as Environment<unknown>, train: all.slice(nTest), test, heldOut: new Map([['simulator', test]]) };
  },
  withHeldOut: atLeastHeldOut,
});
