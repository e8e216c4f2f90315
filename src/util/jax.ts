import { init } from '@jax-js/jax';

let ready: Promise<unknown> | undefined;

/**
 * Starts jax-js's wasm backend once per process, for every user (the predictor's network and the tiny
 * LM's trainer). Plain `init()` probes WebGPU and crashes on Node 20, hence the explicit backend.
 */
export function initJax(): Promise<unknown> {
  ready ??= init('wasm');
  return ready;
}
