/** The world kind (env.kind world): the embedded multi-hop search world, for the embedded policy and the tiny LM. */
import { z } from 'zod';
import { atLeastHeldOut, questions, seed, successOf, successRule, successThreshold, testFraction, topK } from '../kind-fields.ts';
import { envKind, kindObject } from '../kind.ts';
import { ANSWER_METRICS } from '../metrics.ts';
import type { Environment } from '../types.ts';

const world = kindObject('world', {
  seed,
  questions,
  testFraction,
  topK,
  successRule,
  successThreshold,
  prompt: z
    .enum(['search-r1', 'question'])
    .default('search-r1')
    .describe(
      'World prompt text: search-r1 (instructions + question) or question (`Question: …` alone, what the tiny LM is trained on; use it when serving that model to an OpenAI policy).',
    ),
  // Optional with no default, so a configuration that does not set it parses (and hashes its warm start) exactly as before.
  world: z
    .object({ profile: z.enum(['default', 'late']).default('default') })
    .strict()
    .optional()
    .describe(
      'world only: profile default = the world as it always was; late = the late-decision world: 3–4-hop bridge questions only (no comparisons), so several choices follow the first search, and a sparser warm start (the demonstrator noise is policy.bc.noise × 2, capped at 1). docs/environments.md.',
    ),
});

export const worldKind = envKind('world', world, {
  async build(s, { maxTurns }) {
    const { WorldEnv, worldCandidateSource } = await import('./world-env.ts');
    const env = new WorldEnv({
      seed: s.seed,
      questions: s.questions,
      testFraction: s.testFraction,
      topK: s.topK,
      maxTurns,
      success: successOf(s),
      prompt: s.prompt,
      ...(s.world ? { profile: s.world.profile } : {}),
    });
    return {
      env: env as Environment<unknown>,
      train: env.train,
      test: env.test,
      heldOut: new Map([['world', env.test]]),
      candidates: worldCandidateSource(env),
    };
  },
  withHeldOut: atLeastHeldOut,
  metrics: ANSWER_METRICS,
  // Measured on each profile; the compare bench keeps frozen copies of these, so its records stay comparable when they change.
  equalTokenBudget: (s) => (s.world?.profile === 'late' ? 15_000 : 11_500),
});
