/**
 * env and policy are families with a strict schema per kind (src/env/registry.ts,
 * src/policy/registry.ts): a setting of another kind is refused under its own path and names the
 * kinds that take it; a run stored before, which held every kind's settings, still reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENV_KIND_NAMES } from '../../src/env/registry.ts';
import { policyKinds } from '../../src/policy/registry.ts';
import { parseTrainConfig } from '../../src/train/index.ts';

/** One field each kind does not take, and a kind that does take it (null: no kind does). */
const FOREIGN_ENV: Record<string, [field: string, value: unknown, owner: string | null]> = {
  world: ['datasets', 'hotpotqa', 'qa'],
  simulator: ['topK', 3, 'world'],
  qa: ['prompt', 'question', 'world'],
  bfcl: ['questions', 100, 'world'],
  math: ['seed', 1, 'world'],
  'math-world': ['topK', 3, 'world'],
  openenv: ['topK', 3, 'world'],
  agentgym: ['seed', 1, 'world'],
};
/** What a kind needs besides the foreign field to be read at all: the remote kinds' server and tasks. */
const NEEDS_ENV: Record<string, object> = {
  openenv: { url: 'http://127.0.0.1:1', tasks: [0] },
  agentgym: { url: 'http://127.0.0.1:1', tasks: [0] },
};

test('every environment kind refuses a setting of another kind under its own path, naming who takes it', () => {
  assert.deepEqual(Object.keys(FOREIGN_ENV).sort(), [...ENV_KIND_NAMES].sort());
  for (const [kind, [field, value, owner]] of Object.entries(FOREIGN_ENV)) {
    assert.throws(
      () => parseTrainConfig({ env: { kind, ...NEEDS_ENV[kind], [field]: value } }),
      (e: Error) => {
        assert.match(e.message, new RegExp(`^config\\.env\\.${field}: "${field}" is not a setting of env\\.kind ${kind} \\(${owner}[^)]* takes? it\\)`), kind);
        return true;
      },
    );
  }
});

test('a nested setting of the other math kind is refused on its path (env.math.problems for math, env.math.format for math-world)', () => {
  assert.throws(
    () => parseTrainConfig({ env: { kind: 'math', math: { problems: 100 } } }),
    /^ConfigError: config\.env\.math\.problems: "problems" is not a setting of env\.kind math \(math-world takes it\)/,
  );
  assert.throws(
    () => parseTrainConfig({ env: { kind: 'math-world', math: { format: 'code-tag' } } }),
    /config\.env\.math\.format: "format" is not a setting of env\.kind math-world \(math takes it\)/,
  );
  // Refused while parsing now, not when the run starts.
  assert.throws(() => parseTrainConfig({ env: { kind: 'math', math: { tool: 'inline' } } }), /config\.env\.math\.tool: /);
});

const FOREIGN_POLICY: Record<string, [field: string, value: unknown, owner: string]> = {
  embedded: ['temperature', 0.5, 'openai'],
  'tiny-lm': ['warmStart', 'none', 'embedded'],
  scripted: ['clip', 0.1, 'embedded'],
  openai: ['epochs', 2, 'embedded'],
  'simulator-tabular': ['warmStart', 'bc', 'embedded'],
  tinker: ['warmStart', 'none', 'embedded'],
};

test('every policy kind refuses a setting of another kind under its own path', () => {
  assert.deepEqual(Object.keys(FOREIGN_POLICY).sort(), policyKinds.names().sort());
  const needs: Record<string, object> = {
    'tiny-lm': { model: 'm.gguf' },
    openai: { baseUrls: ['http://localhost:8000/v1'] },
    tinker: { baseUrl: 'http://localhost:8080' },
  };
  for (const [kind, [field, value, owner]] of Object.entries(FOREIGN_POLICY)) {
    const policy = { kind, ...needs[kind], [field]: value };
    assert.throws(
      () => parseTrainConfig({ policy }),
      new RegExp(`config\\.policy\\.${field}: "${field}" is not a setting of policy\\.kind ${kind} \\(${owner}`),
      kind,
    );
    assert.doesNotThrow(() => parseTrainConfig({ policy: { kind, ...needs[kind] } }), kind);
  }
  assert.throws(() => parseTrainConfig({ policy: { kind: 'tiny-lm' } }), /config\.policy\.model: policy\.kind tiny-lm needs policy\.model/);
  assert.throws(
    () => parseTrainConfig({ policy: { kind: 'gpt' } }),
    /config\.policy\.kind: Invalid option: expected one of "embedded"\|"scripted"\|"openai"\|"tinker"\|"simulator-tabular"\|"tiny-lm"/,
  );
  assert.throws(() => parseTrainConfig({ env: { kind: 'atlantis' } }), /config\.env\.kind: Invalid option: expected one of "world"\|"simulator"/);
});

/** env and policy as runs stored them before the families: every kind's settings, defaults filled. */
const OLD_ENV = {
  seed: 7,
  questions: 120,
  testFraction: 0.2,
  datasets: [{ source: 'hotpotqa', weight: 1, evalOnly: false }],
  retrieval: 'per-question',
  retrieverTimeoutMs: 30000,
  topK: 3,
  successRule: 'f1',
  successThreshold: 0.3,
  prompt: 'search-r1',
  math: {
    dataset: 'gsm8k-train',
    problems: 1200,
    noise: 0.3,
    testDataset: 'gsm8k',
    format: 'markdown',
    workers: 1,
    unsafeUnconfined: false,
    timeoutMs: 5000,
    memoryMb: 256,
    outputBytes: 16384,
  },
};
const OLD_POLICY = {
  learningRate: 0.1,
  temperature: 1,
  clip: 0.2,
  epochs: 4,
  sharedTurns: 'per-leaf',
  warmStart: 'bc',
  bc: { seed: 0, noise: 0.35, demosPerPrompt: 2, epochs: 100, learningRate: 0.1 },
};

test('a configuration stored before the families reads as its kinds’ settings (resume, export, eval --run)', () => {
  const stored = (env: object, policy: object) => parseTrainConfig({ env: { ...OLD_ENV, ...env }, policy: { ...OLD_POLICY, ...policy } }, { stored: true });
  assert.deepEqual(stored({ kind: 'world' }, { kind: 'embedded' }).env, {
    kind: 'world',
    seed: 7,
    questions: 120,
    testFraction: 0.2,
    topK: 3,
    successRule: 'f1',
    successThreshold: 0.3,
    prompt: 'search-r1',
  });
  const { temperature: _, ...embedded } = OLD_POLICY;
  // A stored config without a strategy meant the paper's trace: trace was the default until 2026-12-03, and presets came later.
  assert.deepEqual(
    stored({ kind: 'simulator' }, { kind: 'embedded' }),
    parseTrainConfig({ env: { kind: 'simulator', questions: 120 }, policy: { kind: 'embedded', ...embedded }, strategy: { name: 'trace', preset: 'paper' } }),
  );
  const world = stored({ kind: 'math-world' }, { kind: 'scripted', learningRate: 0 });
  assert.deepEqual(world.env, {
    kind: 'math-world',
    seed: 7,
    testFraction: 0.2,
    math: { problems: 1200, noise: 0.3, tool: 'inline', workers: 1, unsafeUnconfined: false, timeoutMs: 5000, memoryMb: 256, outputBytes: 16384 },
  });
  assert.deepEqual(world.policy, { kind: 'scripted' });
  const lm = stored({ kind: 'world' }, { kind: 'tiny-lm', model: 'm.gguf', learningRate: 0.0003 });
  assert.deepEqual(lm.policy, {
    kind: 'tiny-lm',
    model: 'm.gguf',
    learningRate: 0.0003,
    temperature: 1,
    clip: 0.2,
    epochs: 4,
    normalise: 'turns',
    sharedTurns: 'per-leaf',
  });
  // In a user's configuration the same bag is an error.
  assert.throws(() => parseTrainConfig({ env: { kind: 'world', ...OLD_ENV } }), /config\.env\.datasets/);
});
