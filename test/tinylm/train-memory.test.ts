import { wasmHeapBytes } from './wasm-heap.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { train } from '../../src/train/index.ts';
import { fixture, shortRunConfig, writeTemp } from './fixtures.ts';

test('train() frees what it allocates: the jax-js heap stays flat over several tiny-LM runs in one process', async () => {
  const { model } = fixture();
  const file = writeTemp(model);
  const root = mkdtempSync(join(tmpdir(), 'tinylm-memory-'));
  const heap: number[] = [];
  try {
    for (let run = 0; run < 4; run++) {
      await train({ out: join(root, `run${run}`), clock: () => 0, config: shortRunConfig(file, run) });
      heap.push(wasmHeapBytes());
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`jax-js wasm heap after each run (MB): ${heap.map((b) => (b / 2 ** 20).toFixed(1)).join(', ')}`);
  assert.ok(heap[0]! > 0, 'the runs used jax-js');
  // After the first run every buffer size has been seen: later runs reuse freed buffers and add nothing.
  for (const [i, b] of heap.entries()) if (i > 0) assert.ok(b <= heap[0]!, `run ${i} grew the heap from ${heap[0]} to ${b} bytes`);
});
