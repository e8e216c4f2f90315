/** `trace-rl bfcl check|exec` as a user runs them: JSON lines in, JSON lines out, one-line errors. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { runCli } from '../../helpers/run-cli.ts';
import { loadCategory } from '../../../src/env/bfcl/data.ts';

const dataDir = join(import.meta.dirname, '../../../data/bfcl');
const base = loadCategory(dataDir, 'base').slice(0, 3);
const missParam = loadCategory(dataDir, 'miss_param').slice(0, 2);

test('check: ground truths pass; a dropped call and swapped turns fail with BFCL error types; output in input order', async () => {
  const lines = [
    ...base.map((e) => ({ id: e.id, category: 'base', turns: e.groundTruth })),
    { id: base[0]!.id, category: 'base', turns: base[0]!.groundTruth.map((t, i) => (i === 0 ? t.slice(0, -1) : t)) },
    { id: base[1]!.id, category: 'base', turns: [base[1]!.groundTruth[1], base[1]!.groundTruth[0], ...base[1]!.groundTruth.slice(2)] },
    ...missParam.map((e) => ({ id: e.id, category: 'miss_param', turns: e.groundTruth })),
  ];
  const r = await runCli(['bfcl', 'check', '--data', dataDir], lines.map((l) => JSON.stringify(l)).join('\n'));
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    out.map((o) => o.id),
    lines.map((l) => l.id),
  );
  assert.deepEqual(
    out.slice(0, 3).map((o) => [o.valid, o.error_type]),
    [
      [true, null],
      [true, null],
      [true, null],
    ],
  );
  assert.equal(out[3].valid, false);
  assert.match(out[3].error_type, /^multi_turn:(instance_state_mismatch|execution_response_mismatch)$/);
  assert.equal(out[4].valid, false);
  assert.match(out[4].error_type, /^multi_turn:/);
  assert.deepEqual(
    out.slice(5).map((o) => o.valid),
    [true, true],
  );
});

test('exec: one result text per call, per turn', async () => {
  const e = base[0]!;
  const r = await runCli(['bfcl', 'exec'], JSON.stringify({ id: e.id, category: 'base', turns: e.groundTruth }));
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.id, e.id);
  assert.deepEqual(
    out.turns.map((t: { results: string[] }) => t.results.length),
    e.groundTruth.map((t) => t.length),
  );
  assert.equal(out.turns[0].results[0], '{"current_working_directory": "document"}');
});

test('malformed input, unknown ids and wrong categories: one stderr line naming the line, exit 2, nothing on stdout', async () => {
  const good = JSON.stringify({ id: base[0]!.id, category: 'base', turns: [] });
  const cases: [string, RegExp][] = [
    [`${good}\n{not json`, /^trace-rl: stdin line 2: not valid JSON/],
    [`${good}\n{"id": "multi_turn_base_0", "category": "base", "turns": [[1]]}`, /^trace-rl: stdin line 2: turns\.0\.0: /],
    [`${good}\n\n{"id": "multi_turn_base_9999", "category": "base", "turns": []}`, /^trace-rl: stdin line 3: id: unknown BFCL entry "multi_turn_base_9999"/],
    [`{"id": "multi_turn_base_0", "category": "nope", "turns": []}`, /^trace-rl: stdin line 1: category: /],
    [
      `{"id": "multi_turn_base_0", "category": "long_context", "turns": []}`,
      /^trace-rl: stdin line 1: category: "long_context" does not match multi_turn_base_0/,
    ],
  ];
  for (const [input, pattern] of cases) {
    const r = await runCli(['bfcl', 'check'], input);
    assert.equal(r.code, 2, input);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
