/**
 * Bad input everywhere a user types or supplies something: configuration files, dataset and corpus
 * JSONL, stdin JSON of the solver commands, advantages and score, GGUF model files. Property-based
 * (fast-check): every malformed input is rejected with one line naming the place, or is valid; none
 * crashes. Plus: a rejected configuration writes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzParser, parserCases } from './malformed.ts';
import { BIN } from './crash-harness.ts';

for (const c of parserCases()) {
  test(`malformed input, ${c.name}: rejected on one line naming the place, never a crash`, async () => {
    const counts = await fuzzParser(c, 120, 20261129);
    assert.equal(counts.tried, 120);
    assert.ok(counts.rejected >= 60, `mostly malformed inputs were generated (${counts.rejected} rejected of ${counts.tried})`);
  });
}

test('a rejected configuration file starts nothing and writes nothing', () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-badcfg-'));
  const cases: Array<[string, string, RegExp]> = [
    ['bad.yaml', 'strategy:\n  name: trace\n budget: 3\n', /bad\.yaml:\d+:\d+: not valid YAML/],
    ['typo.json', JSON.stringify({ strategy: { name: 'trace', budgte: 8 } }), /config\.strategy/],
    ['range.yaml', 'steps: 0\n', /config\.steps/],
  ];
  const runs = cases.map(([name, text]) => {
    writeFileSync(join(root, name), text);
    return spawnSync(process.execPath, [BIN, 'train', '--config', join(root, name), '--out', join(root, `out-${name}`), '--quiet'], { encoding: 'utf8' });
  });
  runs.forEach((r, i) => {
    const [name, , pattern] = cases[i]!;
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, '', `${name}: nothing on stdout`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line`);
    assert.match(r.stderr, pattern);
    assert.equal(existsSync(join(root, `out-${name}`)), false, `${name}: no run folder`);
  });
});
