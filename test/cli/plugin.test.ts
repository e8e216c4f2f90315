import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../../src/store/index.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { CHECKOUT, moduleBeside } from '../helpers/checkout.ts';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync } from 'node:fs';

const plugin = fileURLToPath(moduleBeside(import.meta.url, 'fixtures/every-other-plugin'));

test('train --plugin: a strategy registered by a module the command line names trains like a built-in one, in split steps too', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-plugin-'));
  try {
    const out = join(root, 'run');
    const r = await runCli(['train', '--plugin', plugin, '--strategy', 'every-other', '--budget', '8', '--steps', '1', '--pool', '8', '--out', out, '--quiet']);
    assert.equal(r.code, 0, r.stderr);
    const store = RunStore.open(out, { readonly: true });
    try {
      const trees = store.trees(0);
      const rooted = trees.filter((t) => t.nodes[t.promptId]!.children.length > 0);
      // Every other candidate of the pool, two bare rollouts each, within B = 8.
      assert.equal(rooted.length, 4);
      assert.ok(rooted.every((t) => t.nodes[t.promptId]!.children.length === 2));
      // Split across two worker processes, the workers load the plugin too and grow the same trees.
      const split = join(root, 'split');
      const w = await runCli([
        'train',
        '--plugin',
        plugin,
        '--strategy',
        'every-other',
        '--budget',
        '8',
        '--steps',
        '1',
        '--pool',
        '8',
        '--set',
        'engine.workers=2',
        '--out',
        split,
        '--quiet',
      ]);
      assert.equal(w.code, 0, w.stderr);
      const other = RunStore.open(split, { readonly: true });
      try {
        const byId = (ts: typeof trees) => Object.fromEntries(ts.map((t) => [t.promptId, t]));
        assert.deepEqual(byId(other.trees(0)), byId(trees));
      } finally {
        other.close();
      }
    } finally {
      store.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * `trace-rl compare --plugin <fixture>` with `flags`, in a fresh folder (its --out is `<root>/cmp`).
 * compare and its runs are real processes here: the runs load the plugin in their own process. All of
 * them run the sources through tsx (TRACE_RL_RUN_DIST=0), so the plugin's source registers into the
 * same modules the command reads (a compiled test beside dist/ would be two copies of them).
 */
function comparePlugin(fixture: string, flags: string[], check: (r: SpawnSyncReturns<string>, out: string) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'trace-plugin-compare-'));
  try {
    const out = join(root, 'cmp');
    const plugin = join(CHECKOUT, 'test/cli/fixtures', fixture);
    const r = spawnSync(process.execPath, [join(CHECKOUT, 'bin/trace-rl.js'), 'compare', '--plugin', plugin, ...flags, '--out', out, '--quiet'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, TRACE_RL_RUN_DIST: '0' },
      timeout: 240_000,
    });
    check(r, out);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
const ONE_STEP = ['--seeds', '1', '--steps', '1', '--budget', '8', '--pool', '8', '--set', 'eval.questions=3'];

test('compare --plugin: each run’s own train process loads the plugin, and the report compares its strategy with a built-in one', () => {
  comparePlugin('every-other-plugin.ts', ['--strategies', 'every-other,grpo', ...ONE_STEP], (r, out) => {
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^every-other +1 /m);
    assert.match(r.stdout, /^grpo +1 /m);
    assert.ok(existsSync(join(out, 'report.html')));
    const store = RunStore.open(join(out, 'every-other-s0'), { readonly: true });
    try {
      assert.equal(store.status(), 'finished');
      assert.equal(store.trees(0).filter((t) => t.nodes[t.promptId]!.children.length > 0).length, 4);
    } finally {
      store.close();
    }
  });
});

test('compare: an arm that spends less than the budget it set (a plugin planning 8 of 24 trajectories) fails the comparison in one line, and no report is written', () => {
  // Every other candidate of the pool of 8, two rollouts each: 8 trajectories whatever the budget.
  comparePlugin(
    'every-other-plugin.ts',
    ['--strategies', 'every-other,grpo', '--seeds', '1', '--steps', '1', '--budget', '24', '--pool', '8', '--set', 'eval.questions=3'],
    (r, out) => {
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        /^trace-rl compare: \S*every-other-s0 spent 8 trajectories at step 0 against its budget of 24 \(16 under; at most 1 may be left\); the arms did not spend equal budgets, so no report is written: give a --budget every strategy spends/,
      );
      assert.ok(!existsSync(join(out, 'report.html')));
    },
  );
});

test('compare: a run whose process exits 0 without storing its run fails the comparison in one line, and no report is written', () => {
  comparePlugin('silent-exit-plugin.ts', ['--strategies', 'grpo', ...ONE_STEP], (r, out) => {
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /grpo-s0 failed: its train process exited 0 but .*run\.sqlite is missing/);
    assert.ok(!existsSync(join(out, 'report.html')));
  });
});

test('--plugin that cannot be loaded, or given no path, is one stderr line and exit 2', async () => {
  const missing = await runCli(['train', '--plugin', 'no/such/plugin.js', '--steps', '1']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^trace-rl: --plugin no\/such\/plugin\.js: could not load it \(/);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
  const bare = await runCli(['train', '--plugin']);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /--plugin needs a module path/);
});
