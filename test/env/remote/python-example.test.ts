/**
 * An environment written in Python, trained on over each protocol: examples/python-env/server.py (the
 * locked house; Debian's FastAPI and uvicorn) started on a free port as `--protocol openenv` and as
 * `--protocol agentgym`, and `train` pointed at it with `env.kind` openenv / agentgym. Each run must
 * store trees with continuations from intermediate prefixes (restored by fork, the example's fork
 * extension, or by replay; none differing), and every session the run opened must be closed when it
 * ends (the server's own count, GET /sessions).
 * Then the docs' minimal server (examples/python-env/minimal_server.py, both protocols on one port) is
 * trained on over both, one step each.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../../src/store/index.ts';
import { train } from '../../../src/train/index.ts';

const ROOT = join(import.meta.dirname, '../../..');
// Debian's Python: the one python3-fastapi installs into (a python3 earlier on PATH may be another).
const PYTHON = '/usr/bin/python3';
const root = mkdtempSync(join(tmpdir(), 'trace-python-env-'));
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts a Python example server; resolves with its base URL once FastAPI answers. */
async function startPython(script: string, args: (port: number) => string[]): Promise<string> {
  const port = await freePort();
  const child = spawn(PYTHON, [join(ROOT, 'examples/python-env', script), ...args(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) assert.fail(`${script} exited ${child.exitCode}: ${stderr}`);
    const up = await fetch(`${url}/openapi.json`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return url;
    assert.ok(i < 300, `${script} did not start within 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const common = {
  seed: 3,
  pool: 6,
  engine: { maxTurns: 6 },
  strategy: { name: 'trace', budget: 24, continuations: 2 },
  policy: { kind: 'embedded', warmStart: 'none' },
  eval: { every: 1, questions: 2 },
};

function stored(dir: string) {
  const s = RunStore.open(dir, { readonly: true });
  try {
    return s.steps().map((st) => ({ metrics: st.metrics, trees: s.trees(st.step) }));
  } finally {
    s.close();
  }
}

let clock = 0;

/** Trains `steps` steps on `url`; checks the run branched (by fork or replay), every restore matching. */
async function trainOn(name: string, env: Record<string, unknown>, steps: number) {
  const dir = join(root, name);
  await train({
    out: dir,
    config: { ...common, steps, env: { tasks: { from: 0, to: 12 }, testTasks: { from: 100, to: 102 }, action: { text: 'input' }, sessions: 4, ...env } },
    clock: () => clock++,
  });
  const got = stored(dir);
  assert.equal(got.length, steps, `${name}: ${steps} steps stored`);
  const branched = got.flatMap((s) =>
    s.trees.flatMap((tree) => Object.values(tree.nodes).filter((n) => n.origin === 'continuation' && n.parent !== tree.promptId)),
  );
  assert.ok(branched.length > 0, `${name}: continuations from intermediate prefixes are in the trees`);
  const restores = got.reduce((a, s) => a + s.metrics.replay_restores!, 0);
  assert.ok(restores > 0, `${name}: prefixes restored`);
  // A replay steps at least once; a fork not at all.
  assert.ok(got.every((s) => s.metrics.replay_steps! >= s.metrics.replay_restores! - s.metrics.restore_forks!));
  const forks = got.reduce((a, s) => a + s.metrics.restore_forks!, 0);
  assert.deepEqual(
    got.map((s) => s.metrics.replay_mismatches),
    got.map(() => 0),
    `${name}: the example is replay-deterministic`,
  );
  // The rewards are the game's: every finished leaf scored 0 or 1, and some episode got out.
  const leaves = got.flatMap((s) => s.trees.flatMap((t) => Object.values(t.nodes).filter((n) => n.end)));
  assert.ok(leaves.every((n) => n.reward === undefined || n.reward === 0 || n.reward === 1));
  assert.ok(
    leaves.some((n) => n.reward === 1),
    `${name}: some episode succeeded`,
  );
  return { restores, forks, branched: branched.length };
}

for (const protocol of ['openenv', 'agentgym'] as const) {
  test(`train on the Python example over ${protocol}: continuations by fork (the example is forkable), every session closed`, async () => {
    const url = await startPython('server.py', (port) => ['--protocol', protocol, '--port', String(port), '--max-sessions', '8']);
    const { restores, forks, branched } = await trainOn(`house-${protocol}`, { kind: protocol, url }, 2);
    assert.ok(forks > 0, `${protocol}: the example's fork extension was used (${forks} of ${restores} restores)`);
    const sessions = (await (await fetch(`${url}/sessions`)).json()) as { open: number; opened: number };
    assert.equal(sessions.open, 0, `every session is closed at the end (${sessions.opened} opened)`);
    // At least one per task (its prompt) and one per restore (a replay runs in a session of its own).
    assert.ok(sessions.opened >= 12 + 2 + restores, `${sessions.opened} sessions opened for ${restores} restores`);
    console.log(
      `${protocol}: ${branched} continuation nodes from prefixes, ${restores} restores (${forks} by fork), ${sessions.opened} sessions opened, 0 open at the end`,
    );
  });
}

test('the docs’ minimal server (both protocols on one port) trains over each', async () => {
  const url = await startPython('minimal_server.py', (port) => [String(port)]);
  // It does not fork (no GET /fork): every restore replays.
  const { forks } = await trainOn('minimal-agentgym', { kind: 'agentgym', url }, 1);
  assert.equal(forks, 0);
  // It has no /schema: the action's text field is named.
  await trainOn('minimal-openenv', { kind: 'openenv', url, action: { text: 'input', field: 'message' } }, 1);
});

test('the Python example’s kept states are bounded: past --fork-keep the oldest is refused, a newer one forks, and a key it never gave is refused', async () => {
  const url = await startPython('server.py', (port) => ['--protocol', 'agentgym', '--port', String(port), '--fork-keep', '2']);
  const post = async (path: string, body: object) =>
    (await (await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<
      string,
      unknown
    >;
  assert.deepEqual(await (await fetch(`${url}/fork`)).json(), { version: 1, max_kept: 2, ttl_s: 600 });
  const { id } = await post('/create', {});
  await post('/reset', { id, data_idx: 7 });
  const keys: string[] = [];
  for (let i = 0; i < 3; i++) keys.push((await post('/step', { id, action: 'west', keep: true })).kept as string);
  assert.match(String((await post('/fork', { id, key: keys[0] })).error), /no kept state/, 'the oldest was dropped');
  const forked = await post('/fork', { id, key: keys[2] });
  assert.equal(typeof forked.observation, 'string');
  assert.match(String((await post('/fork', { id, key: 'never-given' })).error), /no kept state/);
  assert.match(String((await post('/fork', { id, key: ['not', 'a', 'key'] })).error), /no kept state/);
  await post('/close', { id });
});
