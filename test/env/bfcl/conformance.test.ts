/**
 * Conformance with BFCL's official Python implementation. The fixture was produced by running
 * ShishirPatil/gorilla's own executor and checker (scripts/bfcl/conformance.py) over every entry of the
 * four multi-turn categories: each ground-truth call's result text, a digest of every instance's public
 * state after each turn, and perturbed attempts (a call dropped, an argument changed, a call repeated,
 * turns swapped, a turn emptied, the last turn cut) with the official verdict and result texts, and
 * the results of hand-written probe sequences (scripts/bfcl/probes.json) that reach error paths and
 * arguments the ground truth never uses. Regenerate with:
 *   TZ=UTC python3 scripts/bfcl/conformance.py --gorilla <gorilla>/berkeley-function-call-leaderboard \
 *     --data data/bfcl --out test/env/bfcl/fixtures/conformance.json --probes scripts/bfcl/probes.json
 *   gzip -9n test/env/bfcl/fixtures/conformance.json   (committed compressed: 4.8 MB → 0.35 MB)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadLongContextData } from '../../../src/env/bfcl/apis/shared.ts';
import { checkAttempt, executeAttempt } from '../../../src/env/bfcl/checker.ts';
import { type BfclEntry, loadAll } from '../../../src/env/bfcl/data.ts';
import { parseJson } from '../../../src/env/bfcl/py/literal.ts';
import type { PyDict } from '../../../src/env/bfcl/py/value.ts';
import { Session, stateText } from '../../../src/env/bfcl/executor.ts';
import { SharedState } from '../../../src/env/bfcl/apis/shared.ts';

const dataDir = join(import.meta.dirname, '../../../data/bfcl');
const fixture = JSON.parse(gunzipSync(readFileSync(join(import.meta.dirname, 'fixtures/conformance.json.gz'))).toString('utf8')) as {
  entries: {
    id: string;
    ground_truth: { results: string[]; state: string }[];
    verdict: { valid: boolean; error_type: string | null };
    attempts: { kind: string; turns: string[][]; verdict: { valid: boolean; error_type: string | null }; exec: string[][] }[];
  }[];
  probes: { name: string; results: string[] }[];
};
const entries = loadAll(dataDir);
const longContextData = loadLongContextData(dataDir);
// Only verify_traveler_information reads the date, with birth dates decades away from the 18-year limit.
const today = { year: 2026, month: 11, day: 30 };
const options = { longContextData, today };
const digest = (s: string) => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;
const stored = (s: string) => (s.length <= 400 ? s : digest(s));

/**
 * Two BFCL messages print a Python set, whose order depends on the interpreter's string-hash seed;
 * compare those with the set's members sorted.
 */
function unordered(text: string): string {
  return text
    .replace(/Must be one of \{([^}]*)\}/, (_, items: string) => `Must be one of {${items.split(', ').sort().join(', ')}}`)
    .replace(/Invalid fields for update: ([^"]*)"/, (_, items: string) => `Invalid fields for update: ${items.split(', ').sort().join(', ')}"`);
}

test('fixture covers all 800 entries', () => {
  assert.equal(fixture.entries.length, 800);
});

test('every ground-truth call gives the official result text and every turn the official state', () => {
  let calls = 0;
  for (const record of fixture.entries) {
    const entry = entries.get(record.id);
    assert.ok(entry, record.id);
    const session = new Session(entry, { shared: new SharedState(longContextData), today });
    entry.groundTruth.forEach((turnCalls, t) => {
      const expected = record.ground_truth[t]!;
      assert.deepEqual(session.run(turnCalls).map(stored), expected.results, `${record.id} turn ${t}`);
      assert.equal(digest(stateText(session.instances)), expected.state, `${record.id} state after turn ${t}`);
      calls += turnCalls.length;
    });
  }
  assert.ok(calls > 4000);
});

test('perturbed attempts give the official result texts (error paths included)', () => {
  for (const record of fixture.entries) {
    const entry = entries.get(record.id)!;
    for (const attempt of record.attempts) {
      const got = executeAttempt(
        entry,
        attempt.turns.map((calls) => [calls]),
        options,
      ).map((turn) => turn.map((r) => unordered(stored(r))));
      const expected = attempt.exec.map((turn) => turn.map(unordered));
      assert.deepEqual(got, expected, `${record.id} ${attempt.kind}`);
    }
  }
});

test('the checker agrees with the official verdict on every ground truth and perturbed attempt', () => {
  const tally = new Map<string, number>();
  for (const record of fixture.entries) {
    const entry = entries.get(record.id)!;
    const truth = checkAttempt(
      entry,
      entry.groundTruth.map((calls) => [calls]),
      options,
    );
    assert.equal(truth.valid, true, `${record.id}: the ground truth must pass`);
    assert.deepEqual({ valid: truth.valid, error_type: truth.errorType }, record.verdict, record.id);
    for (const attempt of record.attempts) {
      const r = checkAttempt(
        entry,
        attempt.turns.map((calls) => [calls]),
        options,
      );
      assert.deepEqual({ valid: r.valid, error_type: r.errorType }, attempt.verdict, `${record.id} ${attempt.kind}`);
      const key = `${attempt.kind}:${r.errorType}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
  }
  // Each kind of damage is caught by the rule BFCL uses for it at least sometimes.
  assert.ok((tally.get('drop:multi_turn:instance_state_mismatch') ?? 0) > 0);
  assert.ok((tally.get('drop:multi_turn:execution_response_mismatch') ?? 0) > 0);
  assert.ok((tally.get('arg:multi_turn:instance_state_mismatch') ?? 0) > 0);
  assert.ok((tally.get('swap:multi_turn:instance_state_mismatch') ?? 0) > 0);
  assert.equal(tally.get('empty:multi_turn:empty_turn_model_response'), 800);
  assert.ok((tally.get('truncated:multi_turn:force_terminated') ?? 0) > 700);
});

test('hand-written probes (error paths, odd arguments, long-context variants) give the official result texts', () => {
  const probes = (parseJson(readFileSync(join(import.meta.dirname, '../../../scripts/bfcl/probes.json'), 'utf8')) as PyDict).get('probes') as PyDict[];
  assert.equal(probes.length, fixture.probes.length);
  for (const probe of probes) {
    const name = probe.get('name') as string;
    const entry: BfclEntry = {
      id: `probe_${name}`,
      category: probe.get('long_context') ? 'long_context' : 'base',
      question: [],
      initialConfig: probe.get('config') as PyDict,
      involvedClasses: probe.get('classes') as string[],
      missedFunction: new Map(),
      excludedFunction: [],
      groundTruth: [],
    };
    const session = new Session(entry, { shared: new SharedState(longContextData), today });
    const expected = fixture.probes.find((p) => p.name === name)!.results;
    assert.deepEqual(session.run(probe.get('calls') as string[]).map(stored), expected, name);
  }
});
