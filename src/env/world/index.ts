/**
 * The embedded multi-hop world: seeded entities, relations and passages, 1–4 hop questions with gold
 * answers and search paths, a Search-R1 environment over BM25, action candidates for action-choosing
 * policies, and a scripted noisy policy.
 */
export * from './types.ts';
export { generateWorld, DEFAULT_WORLD_SIZE, type WorldSize } from './generate.ts';
export { generateQuestions, splitQuestions } from './questions.ts';
export * from './world-env.ts';
export * from './scripted-policy.ts';
