/**
 * One environment, two ways, the same trees: `train` on the world served over the wire (OpenEnv by the
 * real `trace-rl env serve` command in a child process, AgentGym by the same server code in process)
 * stores the same trees, rewards, metrics and details as `train` on the in-process world at the same
 * seeds, with continuations restored by fork (env serve offers it) over OpenEnv and by replay over
 * AgentGym (the in-process server here is started without fork). That shows the fork, the replay and
 * the mapping (prompt, action text, reward and score, candidates) are exact. What differs by construction is left out of the
 * comparison and checked on its own: the wire run's turns carry what the server reported (Turn.env: its
 * candidate lists, each equal to the world's own at that prefix), and it logs what the replays cost.
 *
 * A fleet of two servers, one of which goes away in the middle of the first step: the run finishes
 * with the same trees, its trajectories on the lost server failed over by replay (counted), and the
 * report names each server's load.
 *
 * Then a server that is not replay-deterministic (`--perturb`): every continuation's replay is caught,
 * nothing of it is in the trees, the step's metrics, details and the report say so per prompt; and
 * env.branching roots-only trains on the same server with no replay at all.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { worldCandidateSource, WorldEnv } from '../../../src/env/world/world-env.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import { writeReport } from '../../../src/report/write-report.ts';
import { RunStore } from '../../../src/store/index.ts';
import { buildEnvironment, parseTrainConfig, train } from '../../../src/train/index.ts';
import { diagnose } from '../../../src/diagnose/run.ts';
import { replayLine } from '../../../src/diagnose/format.ts';
import { EmbeddedPolicy } from '../../../src/policy/index.ts';
import { createRng } from '../../../src/util/rng.ts';
import type { RolloutTree, TreeNode } from '../../../src/tree/types.ts';
import { SMALL_TRACE_RUN } from './served-world.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-wire-'));
after(() => rmSync(root, { recursive: true, force: true }));

const WORLD = { seed: 5, questions: 60 };
const MAX_TURNS = 5;
const world = new WorldEnv({ ...WORLD, maxTurns: MAX_TURNS });
const served = await worldKind.build(worldKind.schema.parse({ kind: 'world', ...WORLD }), { maxTurns: MAX_TURNS });

/** The tasks as the served world numbers them (train, then test), under the world's own prompt ids. */
const tasksFile = (param: 'seed' | 'data_idx', which: 'train' | 'test') => {
  const file = join(root, `${param}-${which}.jsonl`);
  const offset = which === 'train' ? 0 : world.train.length;
  const prompts = which === 'train' ? world.train : world.test;
  writeFileSync(file, prompts.map((p, i) => JSON.stringify({ id: p.id, params: { [param]: offset + i } })).join('\n') + '\n');
  return { file };
};

const common = { ...SMALL_TRACE_RUN, engine: { maxTurns: MAX_TURNS }, eval: { every: 1, questions: 6 } };
const wire = (kind: 'openenv' | 'agentgym', url: string | string[], extra: object = {}) => ({
  ...common,
  env: {
    kind,
    url,
    tasks: tasksFile(kind === 'openenv' ? 'seed' : 'data_idx', 'train'),
    testTasks: tasksFile(kind === 'openenv' ? 'seed' : 'data_idx', 'test'),
    questionAfter: 'Question: ',
    successThreshold: 0.3,
    action: { text: 'action' },
    sessions: 6,
    ...extra,
  },
});

/** `trace-rl env serve` in a child process; resolves with its address once it listens. */
function serveCli(args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['bin/trace-rl.js', 'env', 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = / at (http:\/\/[^\s]+)/.exec(err);
      if (m)
        resolve({
          url: m[1]!,
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
    });
    child.once('exit', (code) => reject(new Error(`trace-rl env serve exited ${code}: ${err}`)));
  });
}

function stored(dir: string) {
  const s = RunStore.open(dir, { readonly: true });
  try {
    return s.steps().map((st) => ({ step: st.step, metrics: st.metrics, details: st.details as Record<string, unknown>, trees: s.trees(st.step) }));
  } finally {
    s.close();
  }
}

const withoutTurnEnv = (trees: RolloutTree[]) =>
  trees.map((t) => ({
    ...t,
    nodes: Object.fromEntries(
      Object.entries(t.nodes).map(([id, n]) => {
        if (!n.turn?.env) return [id, n];
        const { env: _env, ...turn } = n.turn;
        return [id, { ...n, turn }];
      }),
    ),
  }));
/** The metrics both runs have: the wire run adds the replays' and forks' cost and the server's load (replay_*, restore_*, env_*). */
const comparable = (metrics: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(metrics).filter(([k]) => !k.startsWith('time_') && !k.startsWith('replay_') && !k.startsWith('restore_') && !k.startsWith('env_')),
  );

test('train over the wire (OpenEnv by `trace-rl env serve`, AgentGym) stores the trees, rewards, metrics and details of the in-process world, continuations by fork (OpenEnv) and by replay (AgentGym)', async () => {
  let t = 0;
  const local = join(root, 'local');
  await train({ out: local, config: { ...common, env: { kind: 'world', ...WORLD } }, clock: () => t++ });
  const want = stored(local);
  assert.ok(
    want.some((s) => s.trees.some((tree) => Object.values(tree.nodes).some((n) => n.origin === 'continuation' && n.parent !== tree.promptId))),
    'the in-process run branched at intermediate prefixes (else replay is not exercised)',
  );

  const cli = await serveCli([
    '--protocol',
    'openenv',
    '--set',
    `env.seed=${WORLD.seed}`,
    '--set',
    `env.questions=${WORLD.questions}`,
    '--max-turns',
    String(MAX_TURNS),
  ]);
  const agentgym = await serveEnvironment(new ServedEnv(served, 'world', { maxSessions: 16 }), 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  try {
    for (const [kind, url] of [
      ['openenv', cli.url],
      ['agentgym', agentgym.url],
    ] as const) {
      const dir = join(root, kind);
      await train({ out: dir, config: wire(kind, url), clock: () => t++ });
      const got = stored(dir);
      assert.equal(got.length, want.length);
      for (const [i, g] of got.entries()) {
        const w = want[i]!;
        assert.deepEqual(withoutTurnEnv(g.trees), w.trees, `${kind} step ${g.step}: trees`);
        assert.deepEqual(comparable(g.metrics), comparable(w.metrics), `${kind} step ${g.step}: metrics`);
        const { replay, servers, ...details } = g.details;
        assert.deepEqual(details, w.details, `${kind} step ${g.step}: details`);
        // What the wire run adds: the replays' cost, no mismatch, and the server's candidates, each the world's own.
        if (kind === 'openenv') {
          // env serve forks: every restored prefix was kept by the server when it was played.
          assert.ok(g.metrics.replay_restores! > 0 && g.metrics.restore_forks === g.metrics.replay_restores, `${kind}: prefixes were restored by fork`);
          assert.deepEqual([g.metrics.replay_steps, g.metrics.restore_fork_fallbacks], [0, 0]);
          assert.equal((servers as { restoreMethod: string }).restoreMethod, 'fork');
        } else {
          assert.ok(g.metrics.replay_restores! > 0 && g.metrics.replay_steps! >= g.metrics.replay_restores!, `${kind}: prefixes were restored by replay`);
          assert.equal(g.metrics.restore_forks, 0);
        }
        assert.equal(g.metrics.env_failovers, 0);
        assert.equal(g.metrics.replay_mismatches, 0);
        assert.deepEqual((replay as { mismatches: object }).mismatches, {});
        console.log(
          `${kind} step ${g.step}: ${g.metrics.replay_restores} restores, ${g.metrics.replay_steps} environment steps replayed, ${Math.round(g.metrics.replay_ms!)} ms`,
        );
        const source = worldCandidateSource(world);
        for (const tree of g.trees) {
          const prompt = world.train.find((p) => p.id === tree.promptId)!;
          for (const node of Object.values(tree.nodes)) {
            if (!node.turn || node.end) continue;
            const turns = pathTurns(tree, node.id);
            assert.deepEqual(node.turn.env?.candidates, source(prompt, turns), `${kind} ${node.id}: the server's candidates are the world's`);
          }
        }
      }
    }
  } finally {
    await cli.stop();
    await agentgym.close();
  }
});

test('a server that is not replay-deterministic: every continuation is caught, not trained on, and reported per prompt; roots-only trains on it without replay', async () => {
  const perturbed = await serveEnvironment(new ServedEnv(served, 'world', { maxSessions: 16, perturb: true }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  let t = 0;
  try {
    const dir = join(root, 'perturbed');
    await train({ out: dir, config: { ...wire('openenv', perturbed.url), steps: 1 }, clock: () => t++ });
    const [step] = stored(dir);
    const replay = step!.details.replay as { mismatches: Record<string, number>; first: string };
    assert.ok(step!.metrics.replay_mismatches! > 0, 'mismatches are counted in the step metrics');
    assert.equal(
      Object.values(replay.mismatches).reduce((a, b) => a + b, 0),
      step!.metrics.replay_mismatches,
      'and per prompt in the details',
    );
    assert.match(replay.first, /differed at turn 0 \(observation\)/);
    for (const tree of step!.trees)
      for (const n of Object.values(tree.nodes))
        assert.ok(n.origin !== 'continuation' || n.parent === tree.promptId, `${n.id}: no continuation from a prefix ran (only root resamples)`);
    const report = join(root, 'report.html');
    const written = await writeReport({ runs: [dir], out: report });
    const note = written.notes.find((n) => n.includes('replayed differently'));
    assert.ok(note, 'the report names the skipped continuations');
    for (const id of Object.keys(replay.mismatches)) assert.ok(note.includes(id), `the report names prompt ${id}`);
    assert.ok(readFileSync(report, 'utf8').includes('replayed differently'));

    const rootsOnly = join(root, 'roots-only');
    await train({ out: rootsOnly, config: { ...wire('openenv', perturbed.url, { branching: 'roots-only' }), steps: 1 }, clock: () => t++ });
    const [ro] = stored(rootsOnly);
    assert.deepEqual([ro!.metrics.replay_restores, ro!.metrics.replay_mismatches], [0, 0]);
    assert.equal(ro!.metrics.cost_trajectories, step!.metrics.cost_trajectories, 'the budget is spent all the same (extra bare rollouts)');
    for (const tree of ro!.trees) for (const n of Object.values(tree.nodes)) assert.ok(n.origin !== 'continuation' || n.parent === tree.promptId);
  } finally {
    await perturbed.close();
  }
});

/** The turns from the root down to node `id`, inclusive. */
function pathTurns(tree: RolloutTree, id: string) {
  const out = [];
  for (let n: TreeNode | undefined = tree.nodes[id]; n && n.turn; n = n.parent ? tree.nodes[n.parent] : undefined) out.unshift(n.turn);
  return out;
}

test('a fleet of two servers, one gone mid-step: the run finishes with the in-process world’s trees, its trajectories failed over, each server’s load reported', async () => {
  let t = 0;
  const local = join(root, 'local-for-fleet');
  await train({ out: local, config: { ...common, env: { kind: 'world', ...WORLD } }, clock: () => t++ });
  const want = stored(local);
  const a = new ServedEnv(served, 'world', { maxSessions: 16 });
  const serverA = await serveEnvironment(a, 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  const serverB = await serveEnvironment(new ServedEnv(served, 'world', { maxSessions: 16 }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  // Server A goes away while answering its 20th step (in the run's first step), with sessions open.
  const step = a.step.bind(a);
  let steps = 0;
  a.step = (session, text, keep) => {
    if (++steps === 20) void serverA.close();
    return step(session, text, keep);
  };
  try {
    const dir = join(root, 'fleet');
    await train({ out: dir, config: wire('openenv', [serverA.url, serverB.url], { sessions: 3 }), clock: () => t++ });
    const got = stored(dir);
    assert.equal(got.length, want.length, 'the run went on to its last step');
    for (const [i, g] of got.entries()) {
      const w = want[i]!;
      assert.deepEqual(withoutTurnEnv(g.trees), w.trees, `fleet step ${g.step}: trees`);
      assert.deepEqual(comparable(g.metrics), comparable(w.metrics), `fleet step ${g.step}: metrics`);
      const { replay: _replay, servers: _servers, ...details } = g.details;
      assert.deepEqual(details, w.details, `fleet step ${g.step}: details`);
      assert.equal(g.metrics.replay_mismatches, 0);
    }
    const failovers = got.reduce((n, g) => n + g.metrics.env_failovers!, 0);
    assert.ok(got[0]!.metrics.env_server_failures! > 0, 'the lost server’s failures are in the metrics');
    assert.ok(failovers > 0, 'trajectories on the lost server continued on the other');
    const first = got[0]!.details.servers as { byServer: Array<{ url: string; sessions: number; failures: number }> };
    assert.deepEqual(
      first.byServer.map((s) => s.url),
      [serverA.url, serverB.url],
    );
    assert.ok(first.byServer[0]!.failures > 0 && first.byServer.every((s) => s.sessions > 0), 'both served; A’s failures counted');
    const written = await writeReport({ runs: [dir], out: join(root, 'fleet-report.html') });
    const load = written.notes.find((n) => n.includes('server load:'));
    assert.ok(
      load?.includes(serverA.url) && load.includes(serverB.url) && load.includes(`${failovers} ${failovers === 1 ? 'trajectory' : 'trajectories'} failed over`),
      load,
    );
    console.log(`fleet: ${failovers} trajectories failed over; ${load}`);
  } finally {
    await Promise.all([serverA.close(), serverB.close()]);
  }
});

test('diagnose on a server environment counts and prints what its replays cost', async () => {
  const server = await serveEnvironment(new ServedEnv(served, 'world', { maxSessions: 16 }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  try {
    const setup = await buildEnvironment(parseTrainConfig(wire('openenv', server.url)));
    const d = await diagnose({
      prompts: setup.train.slice(0, 3),
      env: setup.env,
      policy: new EmbeddedPolicy({ candidates: setup.candidates! }),
      k: 2,
      rollouts: 1,
      rng: createRng(3),
      settings: { maxTurns: MAX_TURNS },
    });
    const continuations = d.trees.flatMap((t) => Object.values(t.nodes)).filter((n) => n.origin === 'continuation' && n.parent !== null).length;
    assert.ok(d.replay && d.replay.restores > 0 && d.replay.mismatches === 0, 'restores counted, none differed');
    assert.ok(continuations > 0);
    assert.match(
      replayLine(d.replay),
      new RegExp(`^replay \\(outside the budget\\): ${d.replay.restores} prefixes restored by replaying ${d.replay.steps} environment steps`),
    );
  } finally {
    await server.close();
  }
});
