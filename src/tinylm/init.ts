import { initJax } from '../predict/mlp-network.ts';

/** Starts jax-js's wasm backend once (shared with the predictor; plain `init()` crashes on Node 20). */
export function initTinyLm(): Promise<unknown> {
  return initJax();
}
