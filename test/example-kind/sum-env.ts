/**
 * A tiny environment kind, `sum`, written the way a new kind is added: this folder and one
 * registration (`registerEnvKind(sumKind, sumPolicies)`; a built-in kind is one line in
 * src/env/registry.ts's BUILT_IN instead, and one in src/policy/env-policies.ts when it brings a policy).
 * The kind brings its settings, its environment, its metrics and its scripted policy. Each prompt asks for the sum of two numbers; `search`
 * with input `numbers` shows them, `answer` ends the episode (reward 1 when it is the sum).
 */
import { z } from 'zod';
import { EnvError, type Environment, type StepOutcome } from '../../src/env/index.ts';
import type { EnvKind } from '../../src/env/registry.ts';
import type { TrajectoryMetrics } from '../../src/env/metrics.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../../src/policy/types.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

export interface SumState {
  prompt: Prompt;
  turns: number;
  done: boolean;
}

export class SumEnv implements Environment<SumState> {
  readonly name = 'sum';
  constructor(readonly maxTurns: number) {}

  reset(prompt: Prompt): SumState {
    return { prompt, turns: 0, done: false };
  }

  render(prompt: Prompt): string {
    return `Find the sum. ${prompt.question}`;
  }

  async step(state: SumState, action: Action): Promise<StepOutcome<SumState>> {
    if (state.done) throw new EnvError(`${state.prompt.id}: the episode has ended`);
    const next = { ...state, turns: state.turns + 1 };
    const limit = next.turns >= this.maxTurns;
    const end = (reward: number, reason: string, observation: string): StepOutcome<SumState> => ({
      state: { ...next, done: true },
      observation,
      done: true,
      reward,
      reason,
    });
    if (action.type === 'answer' && action.input.trim() !== '') {
      const correct = action.input.trim() === state.prompt.answers[0];
      return end(correct ? 1 : 0, 'answer', correct ? 'correct' : 'wrong');
    }
    if (action.type === 'search' && action.input === 'numbers') {
      if (limit) return end(0, 'turn_limit', `numbers: ${numbersOf(state.prompt).join(', ')}`);
      return { state: next, observation: `numbers: ${numbersOf(state.prompt).join(', ')}`, done: false };
    }
    const observation = `invalid action ${action.type}: use search(numbers) or answer(N)`;
    if (limit) return { ...end(0, 'turn_limit', observation), invalid: true };
    return { state: next, observation, done: false, invalid: true, reason: 'unknown_action' };
  }

  restore(prompt: Prompt, turns: readonly Turn[]): SumState {
    const last = turns[turns.length - 1];
    const answered = last?.action.type === 'answer' && last.action.input.trim() !== '';
    return { prompt, turns: turns.length, done: answered || turns.length >= this.maxTurns };
  }
}

function numbersOf(prompt: Prompt): number[] {
  return prompt.meta!.numbers as number[];
}

/** `n` seeded prompts: "What is a + b?" with a, b in 0..9. */
export function sumPrompts(seed: number, n: number): Prompt[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const [a, b] = [Math.floor(rng.next() * 10), Math.floor(rng.next() * 10)];
    return { id: `sum-${i}`, question: `What is ${a} + ${b}?`, answers: [String(a + b)], meta: { numbers: [a, b] } };
  });
}

const sumSchema = z.strictObject({
  kind: z.literal('sum'),
  seed: z.number().int().min(0).default(0).describe('Seed of the prompts.'),
  questions: z.number().int().min(10).default(100).describe('Prompts generated.'),
});

/** What the kind's evaluation measures: its success reward, and how often the answer was one too many (the near miss the candidates offer). */
const sumMetrics: TrajectoryMetrics = {
  metrics: ['accuracy', 'off_by_one'],
  score: (prompt, outcome) => ({
    accuracy: outcome.reward === 1 ? 1 : 0,
    off_by_one: outcome.answer !== undefined && Number(outcome.answer) === Number(prompt.answers[0]) + 1 ? 1 : 0,
  }),
};

/** The registry entry: schema, build, what the embedded policy may choose (search, or answer a sum near the right one), and the metrics. */
export const sumKind: EnvKind<'sum', z.output<typeof sumSchema>> = {
  name: 'sum',
  schema: sumSchema,
  build(settings, { maxTurns }) {
    const all = sumPrompts(settings.seed, settings.questions);
    const test = all.slice(0, Math.round(all.length / 5));
    return {
      env: new SumEnv(maxTurns) as Environment<unknown>,
      train: all.slice(test.length),
      test,
      heldOut: new Map([['sum', test]]),
      candidates: (prompt, turns) => {
        const [a, b] = numbersOf(prompt);
        const seen = turns.some((t) => t.action.type === 'search');
        return { search: seen ? [] : ['numbers'], answer: [String(a! + b!), String(a! + b! + 1)] };
      },
    };
  },
  withHeldOut: (s, n) => ({ ...s, questions: Math.max(s.questions, n * 5) }),
  metrics: sumMetrics,
};

/** The kind's scripted policy (`policy.kind: scripted` on env sum): looks at the numbers, then answers; sampled, one answer in four is one too many. */
export class ScriptedSumPolicy implements Policy {
  readonly name = 'sum-scripted';
  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    if (!ctx.turns.some((t) => t.action.type === 'search')) return { text: 'search numbers', action: { type: 'search', input: 'numbers' }, generatedTokens: 2 };
    const [a, b] = numbersOf(ctx.prompt);
    const slip = !ctx.greedy && ctx.rng.next() < 0.25 ? 1 : 0;
    const answer = String(a! + b! + slip);
    return { text: `answer ${answer}`, action: { type: 'answer', input: answer }, generatedTokens: 2 };
  }
}

/** The policies the kind brings (registered with it by registerEnvKind). */
export const sumPolicies = { scripted: () => new ScriptedSumPolicy() };
