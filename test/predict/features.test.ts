import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fnv1a, HashedFeatures, STRUCTURE_FEATURES, type FeatureMatrix } from '../../src/predict/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { plantedSample, prompt, turn } from './helpers.ts';

const row = (m: FeatureMatrix, r: number) => {
  const out = new Map<number, number>();
  for (let k = m.indptr[r]; k < m.indptr[r + 1]; k++) out.set(m.idx[k], m.val[k]);
  return out;
};
const structure = (f: HashedFeatures, m: FeatureMatrix, r: number, name: (typeof STRUCTURE_FEATURES)[number]) =>
  row(m, r).get(f.dim - STRUCTURE_FEATURES.length + STRUCTURE_FEATURES.indexOf(name)) ?? 0;

test('FNV-1a matches its published test vectors', () => {
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
  assert.equal(fnv1a('foobar'), 0xbf9cf968);
});

test('encoding is identical across extractor instances and call orders', () => {
  const rng = createRng(7);
  const hs = Array.from({ length: 50 }, (_, i) => plantedSample(rng, `p${i}`).history);
  const a = new HashedFeatures().encode(hs);
  const f = new HashedFeatures();
  f.encode(hs.slice().reverse()); // warm caches in another order
  const b = f.encode(hs);
  assert.deepEqual(a.indptr, b.indptr);
  assert.deepEqual(a.idx, b.idx);
  assert.deepEqual(a.val, b.val);
  for (let r = 0; r < a.rows; r++) {
    const idx = Array.from(a.idx.subarray(a.indptr[r], a.indptr[r + 1]));
    assert.deepEqual(
      idx,
      idx.slice().sort((x, y) => x - y),
      'indices sorted within a row',
    );
  }
});

test('a fixed history encodes identically in a separate process', () => {
  const script = `
    import { HashedFeatures } from './src/predict/index.ts';
    const h = { prompt: { id: 'q', question: 'Who wrote the novel Dune?', answers: ['Frank Herbert'] },
      turns: [{ thought: '', action: { type: 'search', input: 'Dune novel author' }, observation: 'Dune is a 1965 novel by Frank Herbert.' }] };
    const m = new HashedFeatures().encode([h]);
    console.log(JSON.stringify({ idx: Array.from(m.idx), val: Array.from(m.val) }));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const other = JSON.parse(child.stdout) as { idx: number[]; val: number[] };
  const h = {
    prompt: prompt('q', 'Who wrote the novel Dune?', ['Frank Herbert']),
    turns: [turn('search', 'Dune novel author', 'Dune is a 1965 novel by Frank Herbert.')],
  };
  const m = new HashedFeatures().encode([h]);
  assert.ok(m.idx.length > 10);
  assert.deepEqual(Array.from(m.idx), other.idx);
  assert.deepEqual(Array.from(m.val), other.val);
});

test('question words and searched words hash to different features', () => {
  const f = new HashedFeatures({ hashBits: 16 });
  const q = { prompt: prompt('a', 'paris'), turns: [] };
  const s = { prompt: prompt('b', ''), turns: [turn('search', 'paris', '')] };
  const m = f.encode([q, s]);
  const hashedOf = (r: number) => [...row(m, r).keys()].filter((i) => i < f.dim - STRUCTURE_FEATURES.length);
  const inQuestion = hashedOf(0);
  const inSearch = hashedOf(1);
  assert.equal(inQuestion.length, 1);
  assert.ok(inSearch.length >= 1);
  assert.ok(!inSearch.includes(inQuestion[0]));
});

test('structure features: depth, turns left, gold answer seen, repeats, invalid actions', () => {
  const f = new HashedFeatures({ maxTurns: 4 });
  const p = prompt('q', 'Where is the Louvre?', ['Paris']);
  const turns = [
    turn('search', 'louvre location', 'The Louvre is a museum.'),
    turn('search', 'Louvre location', 'The Louvre is in Paris, France.'),
    turn('invalid', 'garbage', 'Invalid action.'),
  ];
  const hs = [0, 1, 2, 3].map((t) => ({ prompt: p, turns: turns.slice(0, t) }));
  const m = f.encode(hs);
  assert.equal(structure(f, m, 0, 'depth=0'), 1);
  assert.equal(structure(f, m, 2, 'depth'), Math.fround(0.2));
  assert.equal(structure(f, m, 3, 'turns_left'), Math.fround(0.25));
  assert.equal(structure(f, m, 3, 'one_turn_left'), 1);
  assert.equal(structure(f, m, 1, 'gold_in_observations'), 0);
  assert.equal(structure(f, m, 2, 'gold_in_observations'), 1);
  assert.equal(structure(f, m, 2, 'gold_in_last_observation'), 1);
  assert.equal(structure(f, m, 3, 'gold_in_last_observation'), 0);
  assert.equal(structure(f, m, 2, 'last_repeated'), 1, 'same query up to case repeats');
  assert.equal(structure(f, m, 3, 'last_invalid'), 1);
  const noGold = new HashedFeatures({ maxTurns: 4, useGold: false });
  assert.equal(structure(noGold, noGold.encode(hs), 2, 'gold_in_observations'), 0);
});

test('question templates: names and numbers become placeholders, so two questions about different entities encode alike at the root', async () => {
  const { templateTokens } = await import('../../src/predict/text.ts');
  assert.deepEqual(templateTokens('In which country was the director of Silent Harbor 2 born?'), [
    'in',
    'which',
    'country',
    'was',
    'the',
    'director',
    'of',
    '<name>',
    'born',
  ]);
  assert.deepEqual(templateTokens('Simulated task sim-1-5.'), ['simulated', 'task', 'sim', '<num>']);
  assert.deepEqual(templateTokens('Are Kalomer and Vinsel Falls in the same country?'), ['are', '<name>', 'and', '<name>', 'in', 'the', 'same', 'country']);
  const f = new HashedFeatures({ questionFeatures: 'template' });
  const words = new HashedFeatures();
  const hs = [prompt('a', 'Who directed Silent Harbor?'), prompt('b', 'Who directed Iron Letter 2?'), prompt('c', 'Where was Kalomer Vinsel born?')].map(
    (p) => ({ prompt: p, turns: [] }),
  );
  const m = f.encode(hs);
  assert.deepEqual(row(m, 0), row(m, 1));
  assert.notDeepEqual(row(m, 0), row(m, 2));
  const w = words.encode(hs);
  assert.notDeepEqual(row(w, 0), row(w, 1), 'the default hashes the names too');
  assert.notEqual(f.signature, words.signature);
  assert.ok(!words.signature.includes('question='), 'the default signature is unchanged');
  assert.throws(() => new HashedFeatures({ questionFeatures: 'names' as 'words' }), /questionFeatures/);
});

test('question templates on the world: no name word of a mentioned entity is left in any question template', async () => {
  const { templateTokens, tokenize } = await import('../../src/predict/text.ts');
  const { WorldEnv } = await import('../../src/env/index.ts');
  const env = new WorldEnv({ seed: 0, questions: 300 });
  let names = 0;
  for (const p of env.train) {
    const template = new Set(templateTokens(p.question));
    const mentions = (p.meta!.world as { mentions: string[] }).mentions;
    const rest = new Set(tokenize(mentions.reduce((q, m) => q.split(m).join(' '), p.question))); // words outside the names ("Which university …")
    for (const name of mentions) {
      // Capitalised words of the name ("of" in "The Meadow of Denismor" and articles are common words, kept).
      for (const w of tokenize(
        name
          .split(/\s+/)
          .filter((x) => /^\p{Lu}/u.test(x) && !/^(The|A|An)$/.test(x))
          .join(' '),
      )) {
        names++;
        assert.ok(!template.has(w) || rest.has(w), `${p.question}: "${w}" of "${name}" left in the template ${[...template].join(' ')}`);
      }
    }
  }
  assert.ok(names > 100);
});
