import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, test } from 'node:test';
import { analyse } from './analyse.ts';
import { DEFAULT_SCALE, type Arm } from './experiments.ts';
import { loadRun, readRecord, recordText, toRecord } from './load.ts';
import { pairedBootstrap } from './stats.ts';
import { RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

// bench/compare's per-run records are what the paired tables rest on once a run folder is gone (run
// folders are not committed; a machine is not kept). Real short runs, real SQLite stores: the same four
// (two arms, two seeds) for both tests, trained once.
const STRATEGIES = { trace: { name: 'trace', budget: 24 }, grpo: { name: 'grpo', budget: 24 } } as const;
const SEEDS = [3, 4];
const runs = mkdtempSync(join(tmpdir(), 'trace-records-runs-'));
const sharedRun = (label: string, seed: number) => join(runs, `${label}-s${seed}`);
let trained: Promise<void> | undefined;
after(() => rmSync(runs, { recursive: true, force: true }));
const trainRuns = () =>
  (trained ??= (async () => {
    const base = { steps: 2, pool: 16, env: { questions: 300 }, eval: { every: 1, questions: 30 } };
    for (const [label, strategy] of Object.entries(STRATEGIES))
      for (const seed of SEEDS) await train({ out: sharedRun(label, seed), config: { ...base, seed, strategy }, clock: () => performance.now() });
  })());

test('a run record keeps what analyse reads (NaN included), and pool.ts pairs records as the stores say', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-records-'));
  const records = join(root, 'records');
  mkdirSync(records);
  await trainRuns();
  const finals = new Map<string, Map<number, number>>();
  for (const label of Object.keys(STRATEGIES)) {
    for (const seed of SEEDS) {
      const dir = sharedRun(label, seed);
      const stats = loadRun(dir)!;
      const path = join(records, `${label}-s${seed}.json`);
      // A metric a run did not log is NaN in RunStats; JSON writes null, and the record must read NaN back.
      const withGap = { ...stats, anchorYield: [NaN, ...stats.anchorYield.slice(1)] };
      writeFileSync(path, JSON.stringify(toRecord(label, withGap)));
      const back = readRecord(path);
      assert.deepEqual(back, toRecord(label, withGap), 'the record reads back equal');
      assert.ok(Number.isNaN(back.anchorYield[0]), 'null became NaN again');
      // As committed (recordText): integers exact, every other number within 6 significant digits, NaN kept.
      const compactPath = join(records, `${label}-s${seed}.compact.json`);
      writeFileSync(compactPath, recordText(toRecord(label, withGap)));
      const compact = readRecord(compactPath);
      rmSync(compactPath);
      assert.ok(Number.isNaN(compact.anchorYield[0]));
      assert.deepEqual(
        compact.evals.map((e) => e.tokens),
        back.evals.map((e) => e.tokens),
        'integers exact',
      );
      back.ratio.forEach((x, i) => assert.ok(Math.abs(compact.ratio[i]! - x) <= 5e-6 * Math.abs(x), `ratio ${i}: ${compact.ratio[i]} for ${x}`));
      assert.ok(recordText(toRecord(label, withGap)).length < JSON.stringify(toRecord(label, withGap)).length, 'shorter than plain JSON');
      // The final accuracy from the store itself, not through loadRun.
      const store = RunStore.open(dir, { readonly: true });
      const last = store.steps().at(-1)!.metrics.test_accuracy!;
      store.close();
      finals.set(label, (finals.get(label) ?? new Map()).set(seed, last));
    }
  }
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/compare/pool.ts', '--records', records, '--arms', 'trace,grpo', '--reference', 'grpo'], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const d = pairedBootstrap(finals.get('trace')!, finals.get('grpo')!);
  const row = run.stdout.split('\n').find((l) => l.startsWith('| trace | 3, 4 |'));
  assert.ok(row, run.stdout);
  assert.ok(
    row.includes(`${(100 * d.mean).toFixed(1)} pts [${(100 * d.lo).toFixed(1)}, ${(100 * d.hi).toFixed(1)}] (2)`),
    `${row} has trace − grpo from the stores`,
  );
  assert.match(run.stdout, /\| grpo \| 3, 4 \| .* \| \(reference\) \|/);
  assert.match(run.stdout, /mixed trees \/ 100 traj\./, 'records written from run folders carry the per-step metrics');

  const missing = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/compare/pool.ts', '--records', records, '--arms', 'trace,dapo', '--reference', 'grpo'],
    { encoding: 'utf8' },
  );
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--reference grpo is not one of --arms trace,dapo/);
});

// A final completed in a later session: the earlier session's run folders are gone, their records are
// committed. analyse must pair those seeds from the records exactly as it did from the folders.
test('analyse reads a run from its record when the run folder is gone, with the same numbers', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-records-analyse-'));
  const arms: Arm[] = [
    { label: 'trace', env: 'world', strategy: STRATEGIES.trace, meaning: 'trace' },
    { label: 'grpo', env: 'world', strategy: STRATEGIES.grpo, meaning: 'grpo' },
  ];
  const seeds = SEEDS;
  const runDir = (label: string, seed: number) => join(root, 'runs', `${label}-s${seed}`);
  // A copy: this test removes a run folder.
  await trainRuns();
  cpSync(runs, join(root, 'runs'), { recursive: true });
  const lines: string[] = [];
  const options = {
    out: root,
    plots: join(root, 'plots'),
    experiments: new Map([['final-env' as const, arms]]),
    seeds,
    runDir,
    scale: { ...DEFAULT_SCALE, steps: 2 },
    machine: 'test',
    log: (l: string) => lines.push(l),
  };
  const quiet = process.stdout.write;
  const summary = async () => {
    process.stdout.write = () => true;
    try {
      await analyse(options);
    } finally {
      process.stdout.write = quiet;
    }
    return JSON.parse(readFileSync(join(root, 'summary.json'), 'utf8')) as Record<string, unknown>;
  };
  const fromFolders = await summary();
  rmSync(runDir('grpo', 4), { recursive: true });
  const fromRecord = await summary();
  // Records keep 6 significant digits (recordText), so the summaries agree to that precision.
  assertDeepClose(fromRecord, fromFolders, 'summary');
  assert.ok(
    lines.some((l) => /1 run\(s\) read from records .* not in the HTML report/.test(l)),
    lines.join('\n'),
  );
  rmSync(join(root, 'records', 'grpo-s4.json'));
  const without = await summary();
  assert.deepEqual(
    (without['final-env'] as Array<{ label: string; seeds: number[] }>).map((r) => [r.label, r.seeds]),
    [
      ['trace', [3, 4]],
      ['grpo', [3]],
    ],
    'with neither folder nor record the seed is missing, not invented',
  );
  rmSync(root, { recursive: true });
});

/** Deep equality with numbers equal to within 1e-5 relative (NaN equal to NaN). */
function assertDeepClose(a: unknown, b: unknown, path: string): void {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) || Number.isNaN(b)) return assert.ok(Number.isNaN(a) && Number.isNaN(b), `${path}: ${a} against ${b}`);
    return assert.ok(Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)), `${path}: ${a} against ${b}`);
  }
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return assert.equal(a, b, path);
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${path}: keys`);
  for (const k of Object.keys(a)) assertDeepClose((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
}
