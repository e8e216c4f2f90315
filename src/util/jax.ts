/**
 * The project's one door to jax-js: every module takes jax-js from here, never from '@jax-js/jax'
 * directly, because the kernel-thread shim (wasm-threads.ts) has to be installed before jax-js's
 * module is evaluated (it builds its wasm backend then). ESM evaluates imports in order: the shim first.
 */
import { JAX_THREADS } from './wasm-threads.ts';
import { init } from '@jax-js/jax';

export { jit, lax, nn, numpy, tree, valueAndGrad } from '@jax-js/jax';
export { JAX_THREADS };

let ready: Promise<unknown> | undefined;

/**
 * Starts jax-js's wasm backend once per process, for every user (the predictor's network and the tiny
 * LM's trainer); its kernels run on JAX_THREADS threads for arrays read asynchronously (the tiny LM's
 * training steps). Plain `init()` probes WebGPU and crashes on Node 20, hence the explicit backend.
 */
export function initJax(): Promise<unknown> {
  ready ??= init('wasm');
  return ready;
}
