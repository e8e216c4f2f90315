import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { PolicyCallError } from '../../src/policy/errors.ts';
import { TinyLmPolicy } from '../../src/tinylm/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixture } from './fixtures.ts';

test('a trajectory that fills the context fails the call as data (non-retryable), not as a crash', async () => {
  await initJax();
  const { env, model } = fixture({ context: 64 }, 6);
  const policy = new TinyLmPolicy(model, { sequences: 1 });
  try {
    const prompt = env.train[0]!;
    const ok = await policy.act({ prompt, rendered: '', turns: [], rng: createRng(1), maxTokens: 8 });
    assert.ok(ok.tokens!.ids.length >= 1);
    const turns = [
      { thought: '', action: { type: 'search', input: 'x' }, text: '<search>x</search>', observation: formatInformation(env.world.passages.slice(0, 3)) },
    ];
    await assert.rejects(
      policy.act({ prompt, rendered: '', turns, rng: createRng(1), maxTokens: 8 }),
      (e: unknown) => e instanceof PolicyCallError && e.code === 'context_overflow' && !e.retryable && /fill the model's context of 64/.test(e.message),
    );
  } finally {
    await policy.dispose();
  }
});
