/** Settings several policy kinds take, each described once (a plugin's kind takes them too). */
import { z } from 'zod';
import { NORMALISATIONS, type Normalise } from './surrogate.ts';

export const learningRate = (value: number) =>
  z
    .number()
    .positive()
    .default(value)
    .describe(
      `Adam step size of the policy update; the step passes it to the policy, which uses it as given (default ${value} for this kind: the tiny LM's token-level update needs a far smaller one).`,
    );
export const clip = z.number().positive().default(0.2).describe('PPO clip ε of the clipped surrogate.');
export const epochs = z.number().int().min(1).default(4).describe('Passes (Adam steps) over each step’s samples.');
export const normalise = (value: Normalise) =>
  z
    .enum(NORMALISATIONS)
    .default(value)
    .describe(
      `What the clipped surrogate's sum is divided by (default ${value} for this kind): turns = the turns (the tiny LM: tokens) with a nonzero advantage, so a step is the same size however little contrast it found; samples = the number of samples (one per rewarded leaf), REINFORCE's (1/B) Σ A ∇log π, so every mixed group adds to the step; batch = every sampled turn (token) of the step, zero-advantage ones included, verl's token-mean. It decides whether an allocator's extra contrast can show up in the update at all.`,
    );
export const sharedTurns = z
  .enum(['per-leaf', 'once', 'importance'])
  .default('per-leaf')
  .describe(
    'How a turn shared by several leaves of a tree (a prefix that was expanded) enters the policy loss: per-leaf (default, as Tree-GRPO and TreePO) = once in every leaf’s sample, so a prefix with k leaves below it weighs k; once = one term per tree node (estimators trace and trace-local only, whose advantages are per node); importance = each leaf weighted by Π 1/children over the branch points on its path, so the leaves grown from one bare rollout weigh together as that rollout and expanded prefixes are not over-counted (with outcome-blind branching, strategy.prefixValue, the branch points do not depend on the outcomes below them either).',
  );
export const temperature = z
  .number()
  .positive()
  .max(4)
  .default(1)
  .describe(
    'tiny-lm and openai: sampling temperature τ of the rollouts (greedy evaluation is unaffected); the trainer’s log π is the same softmax(logits / τ), so the PPO ratio against the sampled log-probs stays exact. Below 1, rollouts stay closer to the greedy policy that evaluation measures.',
  );

/** The update settings of a kind that samples tokens and trains them (tiny-lm in process, tinker on an engine). */
export const tokenTrainingFields = (rate: number) => ({
  learningRate: learningRate(rate),
  temperature,
  clip,
  epochs,
  normalise: normalise('turns'),
  sharedTurns,
});
