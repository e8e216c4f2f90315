/**
 * Policies: the contract (act → one turn; trainable ones also update and checkpoint), the embedded
 * trainable policy (the default: candidate actions scored by a linear softmax over hashed features,
 * PPO-style update), the OpenAI-compatible client for vLLM / SGLang / llama.cpp servers and hosted
 * APIs, and model-free policies: the scripted world walker, the simulator's random policy, and the
 * scripted noisy policies of the math world and BFCL.
 * The tiny LM (src/tinylm) is a policy plugin at this level: it registers its own kind (policyKinds),
 * and its model is loaded lazily (node-llama-cpp is heavy).
 */
export * from './types.ts';
export { PolicyCallError } from './errors.ts';
export * from './embedded/index.ts';
export * from './openai/index.ts';
export * from './scripted-policy.ts';
export * from './simulator-policy.ts';
export * from './math-world-policy.ts';
export * from './bfcl-scripted-policy.ts';
export * from './kind.ts';
export * from './env-policies.ts';
export * from './registry.ts';
export * from './simulator-tabular.ts';
