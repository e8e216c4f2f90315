/** Settings several environment kinds take, each described once, and helpers their builds share. */
import { z } from 'zod';
import type { Prompt } from '../tree/types.ts';

export const seed = z
  .number()
  .int()
  .min(0)
  .default(7)
  .describe('Seed of the generated world / simulator; fixed across the runs being compared, so every strategy sees the same questions.');
export const questions = z
  .number()
  .int()
  .min(10)
  .default(1500)
  .describe('Questions generated in the world (before the train/test split) or simulator prompts.');
export const testFraction = z
  .number()
  .gt(0)
  .lt(1)
  .default(0.2)
  .describe('Share of world questions held out for test accuracy (qa: of each dataset, by a seeded shuffle).');
export const topK = z.number().int().min(1).default(3).describe('Documents returned per search.');
export const successRule = z.enum(['f1', 'em', 'f1-or-em']).default('f1').describe('Success for allocation and reward: token F1 ≥ threshold, or exact match.');
export const successThreshold = z.number().min(0).max(1).default(0.3).describe('F1 threshold of the f1 success rule (TRACE-SPEC §2).');

export const successOf = (s: { successRule: 'f1' | 'em' | 'f1-or-em'; successThreshold: number }) => ({ rule: s.successRule, threshold: s.successThreshold });

/** A generated kind's settings with enough questions for `n` held-out ones. */
export const atLeastHeldOut = <S extends { questions: number; testFraction: number }>(s: S, n: number): S => ({
  ...s,
  questions: Math.max(s.questions, Math.ceil(n / s.testFraction)),
});

/** Prompts grouped by a key of each, groups and prompts in the order the prompts come. */
export function groupBy(prompts: readonly Prompt[], key: (p: Prompt) => string): Map<string, Prompt[]> {
  const groups = new Map<string, Prompt[]>();
  for (const p of prompts) groups.set(key(p), [...(groups.get(key(p)) ?? []), p]);
  return groups;
}
