import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RunStore, RunStoreError } from '../../src/store/index.ts';
import { decodeTree, encodeTree } from '../../src/store/tree-codec.ts';
import { addTurn, createTree, endTrajectory } from '../../src/tree/index.ts';
import type { RolloutTree, TokenSpan } from '../../src/tree/types.ts';

/** A tree with token spans on some turns (one without), as a token-mode rollout stores it. */
function tokenTree(id: string, spans: TokenSpan[]): RolloutTree {
  const t = createTree(id, 'Question: who?');
  let parent = id;
  for (const [i, tokens] of spans.entries()) {
    const last = i === spans.length - 1;
    const turn = {
      thought: `t${i}`,
      action: { type: last ? 'answer' : 'search', input: `x${i}` },
      observation: last ? '' : `obs ${i}`,
      text: `text ${i}`,
      tokens,
      generatedTokens: tokens.ids.length,
    };
    parent = addTurn(t, parent, turn, { origin: 'bare' }).id;
  }
  parent = addTurn(t, parent, { thought: 'no span', action: { type: 'answer', input: 'y' }, observation: '' }, { origin: 'bare' }).id;
  endTrajectory(t, parent, 'answer', 1, 0.5);
  return t;
}

const span = (ids: number[], logprobs: number[], mask: number[], prompt?: 'ids' | 'text'): TokenSpan => ({
  ids,
  logprobs,
  mask,
  ...(prompt ? { prompt } : {}),
});

test('a tree with token spans reads back equal, every value exact (and the engine’s sequence id)', () => {
  const t = tokenTree('q1', [
    { ...span([151643, 0, 7], [-0.1, -1e-300, -12.345678901234567], [1, 1, 1], 'ids'), sequenceId: 'req-0f:0' },
    span([], [], [], 'text'),
    span([2 ** 31 - 1, -(2 ** 31)], [0, -Infinity], [0, 1]),
  ]);
  const back = decodeTree(encodeTree(t));
  assert.deepEqual(back, t);
  assert.equal(Object.keys(back.nodes).join(), Object.keys(t.nodes).join(), 'node order is kept');
});

test('ids and masks that do not fit small integers are kept as doubles, not wrapped', () => {
  // A hostile or odd server can send any number as an id; the store must not change it.
  const t = tokenTree('q2', [span([2 ** 31, 1.5, -0], [-1, -2, -3], [1, 0, 2]), span([3], [-0.5], [300])]);
  assert.deepEqual(decodeTree(encodeTree(t)), t);
  assert.ok(Object.is(decodeTree(encodeTree(t)).nodes['q2/0']!.turn!.tokens!.ids[2], -0));
});

test('a span whose arrays differ in length (a policy bug) is stored as it is, beside packed ones', () => {
  const t = tokenTree('q3', [span([1, 2], [-1], [1, 1]), span([3, 4], [-0.5, -0.25], [1, 1], 'ids')]);
  const row = encodeTree(t);
  assert.deepEqual(decodeTree(row), t);
  assert.match(row.toString('utf8'), /"ids":\[1,2\]/, 'the odd span is in the JSON');
});

test('stored rows: JSON text (older runs) reads as before; damaged binary rows are refused', () => {
  const t = tokenTree('q4', [span([5, 6], [-1, -2], [1, 1])]);
  assert.deepEqual(decodeTree(JSON.stringify(t)), t);
  const row = encodeTree(t);
  assert.throws(() => decodeTree(row.subarray(0, row.length - 9)), /cut short or damaged/);
  assert.throws(() => decodeTree(row.subarray(0, 20)), /cut short or damaged/, 'cut inside the JSON');
  assert.throws(() => decodeTree(Buffer.from('XXXX0000')), /neither JSON text nor the binary tree format/);
  // A row at an odd address in memory (SQLite promises no alignment) decodes the same.
  const odd = Buffer.alloc(row.length + 1);
  row.copy(odd, 1);
  assert.deepEqual(decodeTree(odd.subarray(1)), t);
});

test('a binary row is smaller than its JSON', () => {
  const ids = Array.from({ length: 500 }, (_, i) => (i * 7919) % 151_000);
  const t = tokenTree('q5', [
    span(
      ids,
      ids.map((i) => -i / 151_000),
      ids.map(() => 1),
      'ids',
    ),
  ]);
  assert.ok(encodeTree(t).length < Buffer.byteLength(JSON.stringify(t)) * 0.6);
});

test('a version-1 run (trees as JSON text) is read, resumed, and marked version 2 when written', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'trace-codec-')), 'run');
  const old = tokenTree('a', [span([1], [-1], [1], 'ids')]);
  const s = RunStore.create(dir, { seed: 1 });
  s.close();
  // Make it as a version-1 trace-rl left it: a JSON text row, version 1.
  const db = new Database(join(dir, 'run.sqlite'));
  db.prepare("UPDATE meta SET value = '1' WHERE key = 'schema_version'").run();
  db.prepare("INSERT INTO steps (step, metrics, details) VALUES (0, '{}', '{}')").run();
  db.prepare('INSERT INTO trees (step, prompt_id, tree) VALUES (0, ?, ?)').run('a', JSON.stringify(old));
  db.close();
  const ro = RunStore.open(dir, { readonly: true });
  assert.deepEqual(ro.trees(0), [old]);
  ro.close();
  const version = () => {
    const d = new Database(join(dir, 'run.sqlite'), { readonly: true });
    const v = (d.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value;
    d.close();
    return v;
  };
  assert.equal(version(), '1', 'reading does not change the file');
  const w = RunStore.open(dir);
  const next = tokenTree('b', [span([2, 3], [-0.25, -4], [1, 0], 'text')]);
  w.writeStep({ step: 1, metrics: {}, details: {}, trees: [next], checkpoints: {} });
  assert.deepEqual(w.trees(0), [old]);
  assert.deepEqual(w.trees(1), [next]);
  w.close();
  assert.equal(version(), '2');
});

test('a run of an unknown schema version is refused, naming what this trace-rl reads', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'trace-codec-')), 'run');
  RunStore.create(dir, {}).close();
  const db = new Database(join(dir, 'run.sqlite'));
  db.prepare("UPDATE meta SET value = '9' WHERE key = 'schema_version'").run();
  db.close();
  assert.throws(
    () => RunStore.open(dir),
    (e: unknown) => e instanceof RunStoreError && /schema version 9, this trace-rl reads 1 and 2/.test(e.message),
  );
});
