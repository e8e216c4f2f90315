import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEstimator, estimatorNames, forestFromTrees } from '../../src/advantage/index.ts';
import { buildBatch, trieRecords, type TrieRecord } from '../../src/export/index.ts';
import { byteTokenizer } from '../../src/tokens/index.ts';
import { getNode, turnsTo } from '../../src/tree/index.ts';
import { smallRun } from './fixtures.ts';

const utf8 = new TextEncoder();
const byteLength = (s: string) => utf8.encode(s).length;

test('every row decodes to the text of its path: the rendered prompt, then each turn’s model text and observation', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('trace'), render: run.render });
  assert.ok(batch.rows.length >= 20, `a 24-trajectory step gives rows (got ${batch.rows.length})`);
  const byPrompt = new Map(run.trees.map((t) => [t.promptId, t]));
  for (const row of batch.rows) {
    const tree = byPrompt.get(row.prompt_id)!;
    const turns = turnsTo(tree, row.leaf_id);
    assert.equal(row.num_turns, turns.length);
    assert.equal(
      byteTokenizer.decode(row.prompt_ids),
      run.env.render(run.prompts.get(row.prompt_id)!),
      `${row.leaf_id}: prompt ids decode to the rendered prompt`,
    );
    const expected = turns
      .map((t) => {
        assert.ok(t.text !== undefined, 'world turns carry their text');
        return t.text + t.observation;
      })
      .join('');
    assert.equal(byteTokenizer.decode(row.response_ids), expected, `${row.leaf_id}: response ids decode to the path's turns`);
    assert.equal(row.response_text, expected);
    assert.equal(getNode(tree, row.leaf_id).reward, row.reward);
    assert.equal(row.tree_id, `0:${row.prompt_id}`);
    assert.equal(row.logprobs_known, false, 'the embedded policy reports no per-token log-probabilities');
    assert.ok(row.response_logprobs.every((v) => v === 0));
  }
});

test('the response mask is 1 on exactly the model tokens and 0 on exactly the observation tokens', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('grpo') });
  const byPrompt = new Map(run.trees.map((t) => [t.promptId, t]));
  let observationTokens = 0;
  for (const row of batch.rows) {
    const turns = turnsTo(byPrompt.get(row.prompt_id)!, row.leaf_id);
    assert.equal(row.response_mask.length, row.response_ids.length);
    turns.forEach((t, j) => {
      const start = row.turn_starts[j];
      const model = byteLength(t.text!);
      const end = j + 1 < turns.length ? row.turn_starts[j + 1] : row.response_ids.length;
      assert.equal(end - start, model + byteLength(t.observation), `${row.leaf_id} turn ${j}: span length`);
      for (let i = start; i < end; i++) assert.equal(row.response_mask[i], i < start + model ? 1 : 0, `${row.leaf_id} token ${i}`);
      assert.equal(byteTokenizer.decode(row.response_ids.slice(start + model, end)), t.observation, 'the masked tokens are the observation');
      observationTokens += end - start - model;
    });
  }
  assert.ok(observationTokens > 0, 'the world step has search observations to mask');
});

test('advantages equal the estimator’s output for every estimator, spread over each turn’s model tokens', async () => {
  const run = await smallRun();
  for (const name of estimatorNames()) {
    const expected = createEstimator(name).estimate(forestFromTrees(run.trees));
    const batch = buildBatch(run.trees, { step: 3, estimator: createEstimator(name) });
    assert.equal(batch.meta.estimator, name);
    assert.deepEqual(
      batch.rows.map((r) => r.leaf_id),
      expected.map((e) => e.id),
      `${name}: one row per rewarded leaf, in the estimator's order`,
    );
    batch.rows.forEach((row, k) => {
      const e = expected[k];
      assert.equal(row.advantage, e.advantage);
      assert.deepEqual(row.turn_advantages, e.turns);
      assert.deepEqual(row.node_path, e.path);
      for (let i = 0; i < row.response_ids.length; i++) {
        let j = 0;
        while (j + 1 < row.turn_starts.length && row.turn_starts[j + 1] <= i) j++;
        assert.equal(row.advantages[i], row.response_mask[i] === 1 ? e.turns[j] : 0, `${name} ${row.leaf_id} token ${i}`);
      }
    });
    assert.ok(
      batch.rows.some((r) => r.advantage !== 0),
      `${name}: a mixed step has non-zero advantages`,
    );
  }
});

test('anchors list the predicted success of the scored nodes on the path; branch depth is the deepest shared prefix', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('trace') });
  const byPrompt = new Map(run.trees.map((t) => [t.promptId, t]));
  for (const row of batch.rows) {
    const tree = byPrompt.get(row.prompt_id)!;
    const path = [row.prompt_id, ...row.node_path];
    assert.deepEqual(
      row.anchor_ids,
      path.filter((id) => tree.nodes[id].predicted !== undefined),
    );
    assert.deepEqual(
      row.anchor_predicted,
      row.anchor_ids.map((id) => tree.nodes[id].predicted),
    );
    const others = batch.rows.filter((r) => r.prompt_id === row.prompt_id && r.leaf_id !== row.leaf_id);
    // Longest common prefix with any other leaf of the tree, in turns (prompt = depth 0); failed leaves count too.
    const leafIds = Object.values(tree.nodes)
      .filter((n) => n.children.length === 0 && n.id !== row.leaf_id)
      .map((n) => n.id);
    let shared = 0;
    for (const other of leafIds) {
      const a = row.leaf_id.split('/');
      const b = other.split('/');
      let d = 0;
      while (d + 1 < a.length && d + 1 < b.length && a[d + 1] === b[d + 1]) d++;
      shared = Math.max(shared, d);
    }
    assert.equal(row.branch_depth, shared, `${row.leaf_id} (${others.length} other rows in its tree)`);
  }
  assert.ok(
    batch.rows.some((r) => r.anchor_ids.length > 1),
    'trace scored some intermediate prefixes',
  );
  assert.ok(
    batch.rows.some((r) => r.branch_depth > 0),
    'some leaves share a prefix beyond the prompt',
  );
});

test('the prefix trie stores each node once and every leaf’s path concatenates to its verl row', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('tree-grpo') });
  const records = trieRecords(batch);
  assert.equal(records[0].kind, 'meta');
  const nodes = new Map<string, Extract<TrieRecord, { kind: 'node' }>>();
  for (const r of records) {
    if (r.kind !== 'node') continue;
    assert.ok(!nodes.has(r.id), `node ${r.id} appears once`);
    if (r.parent !== null) assert.ok(nodes.has(r.parent), `${r.id}'s parent comes first`);
    nodes.set(r.id, r);
  }
  const leaves = records.filter((r): r is Extract<TrieRecord, { kind: 'leaf' }> => r.kind === 'leaf');
  assert.equal(leaves.length, batch.rows.length);
  let trieTokens = 0;
  let rowTokens = 0;
  for (const n of nodes.values()) trieTokens += n.ids.length;
  leaves.forEach((leaf, k) => {
    const row = batch.rows[k];
    const ids = leaf.path.flatMap((id) => nodes.get(id)!.ids);
    const mask = leaf.path.flatMap((id) => nodes.get(id)!.mask);
    assert.deepEqual(ids, [...row.prompt_ids, ...row.response_ids]);
    assert.deepEqual(mask, [...row.prompt_ids.map(() => 0), ...row.response_mask]);
    assert.deepEqual(leaf.turn_advantages, row.turn_advantages);
    rowTokens += ids.length;
  });
  assert.ok(trieTokens < rowTokens, `shared prefixes are stored once (${trieTokens} < ${rowTokens} tokens)`);
});
