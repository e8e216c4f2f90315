/**
 * World profiles. `default` is the world as it always was. `late` is the late-decision world, where
 * turns after the first still decide the outcome. In the default world more than half the questions take at most two searches, and its
 * comparisons, yes/no questions and bridge-comparisons end in a comparison (of two years, of two
 * countries) that the embedded policy's features cannot express: after two turns a third of the
 * outcome variance is settled and much of what remains is that coin flip
 * (measured by bench/world/late.ts). The late profile changes three things, each for a reason:
 *  - questions are 3–4-hop bridge chains only, so an episode has 3–4 choices after its first search;
 *  - no comparisons, yes/no or bridge-comparisons: their last step compares two values, which the
 *    embedded policy's features (membership, shape, the words before a mention) cannot express, so
 *    its outcome would be a coin flip nothing can learn;
 *  - the behaviour-cloning demonstrator is noisier (`LATE_DEMO_NOISE_SCALE`), so the warm start
 *    succeeds rarely but not never: a sparse start with room to learn.
 * Every later choice is decidable from what the policy sees: the next entity is the one the latest
 * passage names after the relation's cue words ("directed by", "born … from", "headquartered in"),
 * which the policy's question-word × preceding-word features can learn.
 */
export type WorldProfile = 'default' | 'late';

export const WORLD_PROFILES: readonly WorldProfile[] = ['default', 'late'];

/**
 * The late profile's demonstrator noise is the configured one (policy.bc.noise) times this, capped at 1:
 * 0.35 × 2 = 0.7 by default. A scale, not a replacement, so policy.bc.noise still tunes both profiles.
 */
export const LATE_DEMO_NOISE_SCALE = 2;

/** Demonstrator noise of the behaviour-cloning warm start for a profile. */
export function demoNoise(profile: WorldProfile, configured: number): number {
  return profile === 'late' ? Math.min(1, configured * LATE_DEMO_NOISE_SCALE) : configured;
}
