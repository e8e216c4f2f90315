import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch, TokenizerMismatchError } from '../../src/export/index.ts';
import { byteTokenizer, codepointTokenizer, loadTranscript, TokenizerError } from '../../src/tokens/index.ts';
import { addTurn, createTree, endTrajectory, type Turn } from '../../src/tree/index.ts';

const ids = (s: string) => [...s].map((c) => c.codePointAt(0)!);

/** A two-leaf tree whose turns carry a server's ids (one per code point) and per-token log-probabilities. */
function serverTree() {
  const tree = createTree('p1', 'Who wrote Ödön?');
  const turn = (text: string, observation: string, lp: number): Turn => ({
    thought: '',
    action: { type: 'search', input: 'x' },
    observation,
    text,
    tokens: { ids: ids(text), logprobs: ids(text).map((_, i) => lp - i / 100), mask: ids(text).map(() => 1) },
  });
  const a = addTurn(tree, 'p1', turn('<search>Ödön</search>', '\n<information>Doc 1 … 1905</information>\n', -0.5), { origin: 'bare', slot: 0 });
  const b = addTurn(tree, a.id, turn('<answer>1905</answer>', '', -0.1), { origin: 'bare', slot: 0 });
  endTrajectory(tree, b.id, 'answer', 1, 1);
  const c = addTurn(tree, a.id, turn('<answer>no</answer>', '', -2), { origin: 'continuation', slot: 1 });
  endTrajectory(tree, c.id, 'answer', 0, 0);
  return tree;
}

test('server ids and log-probabilities are used unchanged; observations are encoded with the export tokenizer', () => {
  const tree = serverTree();
  const batch = buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: codepointTokenizer });
  assert.equal(batch.rows.length, 2);
  for (const row of batch.rows) {
    assert.equal(row.logprobs_known, true);
    const turns = row.node_path.map((id) => tree.nodes[id].turn!);
    let at = 0;
    for (const t of turns) {
      const span = t.tokens!;
      assert.deepEqual(row.response_ids.slice(at, at + span.ids.length), span.ids, 'server ids unchanged');
      assert.deepEqual(row.response_logprobs.slice(at, at + span.ids.length), span.logprobs, 'server log-probabilities unchanged');
      at += span.ids.length;
      const obs = codepointTokenizer.encode(t.observation);
      assert.deepEqual(row.response_ids.slice(at, at + obs.length), obs);
      assert.ok(row.response_mask.slice(at, at + obs.length).every((m) => m === 0));
      assert.ok(row.response_logprobs.slice(at, at + obs.length).every((v) => v === 0));
      at += obs.length;
    }
    assert.equal(at, row.response_ids.length);
    assert.equal(codepointTokenizer.decode(row.response_ids), row.response_text);
  }
});

test('server ids that the export tokenizer cannot reproduce are refused, naming the node and the fix', () => {
  const tree = serverTree();
  assert.throws(
    () => buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: byteTokenizer }),
    (e: unknown) => {
      assert.ok(e instanceof TokenizerMismatchError);
      assert.match(e.message, /node "p1\/0"/);
      assert.match(e.message, /tokenizer/);
      return true;
    },
  );
  const unchecked = buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: byteTokenizer, checkServerIds: false });
  assert.equal(unchecked.rows.length, 2);
});

test('the byte tokenizer round-trips any text and rejects ids outside its vocabulary', async () => {
  for (const s of ['', 'plain ascii', 'Ödön Horváth — 東京 🌍', '\u0000\n\t']) {
    const encoded = byteTokenizer.encode(s);
    assert.ok(encoded.every((id) => id >= 3 && id <= 258));
    assert.equal(byteTokenizer.decode(encoded), s);
    assert.equal(codepointTokenizer.decode(codepointTokenizer.encode(s)), s);
  }
  assert.throws(() => byteTokenizer.decode([2]), TokenizerError);
  assert.throws(() => byteTokenizer.decode([259]), TokenizerError);
  await assert.rejects(loadTranscript('gpt2'), /choose one of: bytes, codepoints/);
});
