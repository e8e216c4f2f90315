import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../../src/store/index.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { moduleBeside } from '../helpers/checkout.ts';

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

test('--plugin that cannot be loaded, or given no path, is one stderr line and exit 2', async () => {
  const missing = await runCli(['train', '--plugin', 'no/such/plugin.js', '--steps', '1']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^trace-rl: --plugin no\/such\/plugin\.js: could not load it \(/);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
  const bare = await runCli(['train', '--plugin']);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /--plugin needs a module path/);
});
