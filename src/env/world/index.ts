/**
 * The embedded multi-hop world: seeded entities, relations and passages, 1–4 hop questions with gold
 * answers and search paths, a Search-R1 environment over BM25, and action candidates for
 * action-choosing policies (the scripted policy that walks it lives in src/policy/).
 */
export * from './types.ts';
export { generateWorld, DEFAULT_WORLD_SIZE, type WorldSize } from './generate.ts';
export { generateQuestions, splitQuestions } from './questions.ts';
export * from './world-env.ts';
export { WORLD_PROFILES, LATE_DEMO_NOISE_SCALE, demoNoise, type WorldProfile } from './profile.ts';
