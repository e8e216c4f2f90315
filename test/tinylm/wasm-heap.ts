/**
 * Records every WebAssembly.Memory the process creates, so a test can read the size of jax-js's wasm
 * heap (its allocator grows one linear memory and never shrinks it: the size is the high-water mark).
 * jax-js has no public API for this. Import this module before anything that imports jax-js (src/util/jax.ts).
 */
const memories: WebAssembly.Memory[] = [];
const Native = WebAssembly.Memory;
class Recorded extends Native {
  constructor(descriptor: WebAssembly.MemoryDescriptor) {
    super(descriptor);
    memories.push(this);
  }
}
(WebAssembly as { Memory: typeof WebAssembly.Memory }).Memory = Recorded;

/** Bytes of the largest recorded wasm memory (jax-js's heap; 0 before it exists). */
export function wasmHeapBytes(): number {
  return Math.max(0, ...memories.map((m) => m.buffer.byteLength));
}
