/** The BFCL environment driven by the scripted policy: episodes, rewards from the checker, restore, chat/prompt forms. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { BFCL_OBSERVATION_CHARS, BfclEnv, parseBfclText } from '../../../src/env/bfcl/env.ts';
import { ScriptedBfclPolicy } from '../../../src/policy/index.ts';
import type { Prompt } from '../../../src/tree/types.ts';
import type { Turn } from '../../../src/tree/types.ts';
import { createRng } from '../../../src/util/rng.ts';

const env = new BfclEnv({ dataDir: join(import.meta.dirname, '../../../data/bfcl'), seed: 3, today: { year: 2026, month: 11, day: 30 } });

async function episode(policy: ScriptedBfclPolicy, prompt: Prompt, seed: number): Promise<{ turns: Turn[]; reward: number }> {
  const turns: Turn[] = [];
  let state = env.reset(prompt);
  const rng = createRng(seed).fork(prompt.id);
  for (;;) {
    const out = await policy.act({ prompt, rendered: '', turns, rng: rng.fork(turns.length), maxTokens: 64 });
    const step = await env.step(state, out.action!);
    turns.push({ thought: out.thought ?? '', action: out.action!, observation: step.observation });
    state = step.state;
    if (step.done) return { turns, reward: step.reward ?? 0 };
  }
}

test('80/20 seeded split over all 800 entries; the same seed gives the same split', () => {
  assert.equal(env.train.length, 640);
  assert.equal(env.test.length, 160);
  const again = new BfclEnv({ dataDir: join(import.meta.dirname, '../../../data/bfcl'), seed: 3, today: { year: 2026, month: 11, day: 30 } });
  assert.deepEqual(
    again.test.map((p) => p.id),
    env.test.map((p) => p.id),
  );
  const other = new BfclEnv({ dataDir: join(import.meta.dirname, '../../../data/bfcl'), seed: 4, today: { year: 2026, month: 11, day: 30 } });
  assert.notDeepEqual(
    other.test.map((p) => p.id),
    env.test.map((p) => p.id),
  );
});

test('a noiseless scripted policy solves every entry of every category (reward 1 from the checker)', async () => {
  const exact = new ScriptedBfclPolicy(env, { wrongArgument: 0, skip: 0, repeat: 0, stop: 0 });
  for (const prompt of [...env.train, ...env.test]) {
    const { reward } = await episode(exact, prompt, 1);
    assert.equal(reward, 1, prompt.id);
  }
});

test('a noisy scripted policy fails some episodes; restore rebuilds the state of any prefix', async () => {
  const noisy = new ScriptedBfclPolicy(env, { wrongArgument: 0.15, skip: 0.05, repeat: 0.05, stop: 0.05 });
  const rewards: number[] = [];
  for (const prompt of env.test.slice(0, 40)) {
    const { turns, reward } = await episode(noisy, prompt, 2);
    rewards.push(reward);
    // Replaying the recorded steps gives the same verdict as the episode.
    const finished = env.restore(prompt, turns);
    assert.equal(finished.done, true);
    assert.equal(env.check(prompt, finished).valid, reward === 1, prompt.id);
  }
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  assert.ok(mean > 0.05 && mean < 0.95, `success rate ${mean}`);
});

test("miss_func: the held-back function is absent until its turn, then offered with BFCL's message", async () => {
  const prompt = [...env.train, ...env.test].find((p) => env.entry(p).missedFunction.size > 0)!;
  const entry = env.entry(prompt);
  const [turn, names] = [...entry.missedFunction][0]!;
  const exact = new ScriptedBfclPolicy(env, { wrongArgument: 0, skip: 0, repeat: 0, stop: 0 });
  const { turns } = await episode(exact, prompt, 1);
  let state = env.reset(prompt);
  const before = env.tools(prompt, state).map((t) => t.function.name);
  for (const n of names) assert.ok(!before.includes(n), n);
  // Walk to the revealing turn.
  const upto: Turn[] = [];
  for (const t of turns) {
    if (state.userTurn >= turn) break;
    upto.push(t);
    state = env.restore(prompt, upto);
  }
  const after = env.tools(prompt, state).map((t) => t.function.name);
  for (const n of names) assert.ok(after.includes(n), n);
  const messages = env.chatMessages(prompt, upto);
  assert.equal(messages.at(-1)?.role, 'user');
  assert.equal((messages.at(-1) as { content: string }).content, 'I have updated some more functions you can choose from. What about now?');
});

test('prompt form: functions as JSON, Python-list replies parsed into calls, text replies end the turn', () => {
  const prompt = env.test[0]!;
  const text = env.render(prompt);
  assert.match(text, /Functions \(JSON\):\n\[\{"name":/);
  assert.deepEqual(parseBfclText("[cd(folder='a'), ls(a=True)]").action, { type: 'tool_calls', input: JSON.stringify(["cd(folder='a')", 'ls(a=True)']) });
  assert.deepEqual(parseBfclText('All done.').action, { type: 'answer', input: 'All done.' });
  assert.deepEqual(parseBfclText("__import__('os').system('x')").action.type, 'answer');
});

test('evaluateBfcl: accuracy per category; greedy scripted play is perfect, noisy play is not', async () => {
  const { evaluateBfcl } = await import('../../../src/env/bfcl/evaluate.ts');
  const sample = env.test.slice(0, 60);
  const policy = new ScriptedBfclPolicy(env, { wrongArgument: 0.2, skip: 0.05, repeat: 0.05, stop: 0.05 });
  const greedy = await evaluateBfcl(env, policy, sample, { rng: createRng(1), greedy: true });
  assert.equal(greedy.overall.accuracy, 1);
  assert.equal(
    Object.values(greedy.categories).reduce((s, c) => s + c.n, 0),
    60,
  );
  const noisy = await evaluateBfcl(env, policy, sample, { rng: createRng(1) });
  assert.ok(noisy.overall.accuracy < 1 && noisy.overall.accuracy > 0);
  assert.ok(
    Object.keys(noisy.errors).every((k) => k.startsWith('multi_turn:') || k === 'step_limit' || k === 'turn_limit'),
    JSON.stringify(noisy.errors),
  );
});

test('a call that echoes a huge argument is shown cut at BFCL_OBSERVATION_CHARS with a mark; the checker still runs (issue 69)', async () => {
  const prompt = env.train[0]!;
  const state = env.reset(prompt);
  const folder = 'A'.repeat(2 ** 20);
  const step = await env.step(state, { type: 'tool_calls', input: JSON.stringify([`cd(folder='${folder}')`]) });
  assert.ok(step.observation.length < BFCL_OBSERVATION_CHARS + 200, `${step.observation.length} characters`);
  assert.match(step.observation, /^\nTool: \[\{'role': 'tool', 'name': "cd\(folder='AAAA/);
  assert.match(step.observation, /… \[tool results cut: \d+ characters, at most 16384 are shown\]\nAssistant: $/);
  const small = await env.step(state, { type: 'tool_calls', input: JSON.stringify(["cd(folder='nowhere')"]) });
  assert.doesNotMatch(small.observation, /cut:/, 'a short result is shown whole');
});
