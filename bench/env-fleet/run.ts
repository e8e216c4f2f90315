/**
 * Server environments at scale (issue 67; results in BENCHMARKS.md, "Server environments: fork and
 * fleet"). The servers are real `trace-rl env serve` processes (the world over OpenEnv) with a per-step
 * delay, so the environment is latency-bound as real ones are and its CPU is not the orchestrator's.
 *  1. fork: the wall time of one restore of a prefix of depth k = 1…8, by replay (a new session, a
 *     reset, k steps) and by fork (a session from the state the server kept), on one server;
 *  2. fleet: one rollout step (runStep, the embedded policy on the served candidates) against ×1, ×2,
 *     ×4 servers, env.sessions per server: the step's wall time, its speed-up per server, and the
 *     orchestrator's CPU per environment step.
 * Run: npx tsx bench/env-fleet/run.ts [--delay-ms 300] [--reps 3] [--sessions 4] [--tasks 32] [--only fork|fleet]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { openEnvKind } from '../../src/env/remote/kind.ts';
import { OpenEnvServer } from '../../src/env/remote/openenv-session.ts';
import { RemoteEnv } from '../../src/env/remote/remote-env.ts';
import type { Environment } from '../../src/env/types.ts';
import { EmbeddedPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const delayMs = arg('--delay-ms', 300);
const reps = arg('--reps', 3);
const sessions = arg('--sessions', 4);
const tasks = arg('--tasks', 32);
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const ROOT = join(import.meta.dirname, '../..');
const MAX_TURNS = 10;

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
const fmt = (x: { min: number; median: number; max: number }, d = 0) => `${x.min.toFixed(d)} / ${x.median.toFixed(d)} / ${x.max.toFixed(d)}`;

const children: ChildProcess[] = [];

/** `trace-rl env serve` in a process of its own; resolves with its URL once it listens. */
async function serve(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/trace-rl.js'),
      'env',
      'serve',
      '--kind',
      'world',
      '--protocol',
      'openenv',
      '--port',
      '0',
      '--max-turns',
      String(MAX_TURNS),
      '--step-delay-ms',
      String(delayMs),
      '--max-sessions',
      '256',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let err = '';
  for await (const chunk of child.stderr!) {
    err += String(chunk);
    const m = /at (http:\/\/[^\s]+) \(sessions/.exec(err);
    if (m) return m[1]!;
  }
  throw new Error(`env serve did not start: ${err}`);
}

async function forkByDepth(url: string): Promise<string[]> {
  const server = new OpenEnvServer({ url, actionField: 'text', timeoutMs: 30_000, maxReplyBytes: 1 << 20 });
  const offer = await server.forkOffer();
  if (!offer) throw new Error('env serve offered no fork');
  const setup = await openEnvKind.build(
    openEnvKind.schema.parse({ kind: 'openenv', url, tasks: [0, 1, 2, 3], action: { text: 'action' }, questionAfter: 'Question: ', sessions: 8 }),
    { maxTurns: MAX_TURNS },
  );
  const prompt: Prompt = setup.train[0]!;
  const common = { server, maxTurns: MAX_TURNS, action: 'action' as const, successThreshold: 0.3, sessions: 8, branching: 'replay' as const };
  const forking = new RemoteEnv({ ...common, fork: offer });
  const replaying = new RemoteEnv(common);
  // One recorded episode of 8 searches, each kept by the server (a step that may be branched).
  let state = await forking.reset(prompt);
  const turns: Turn[] = [];
  for (let t = 0; t < 8; t++) {
    const action: Action = { type: 'search', input: `query ${t}` };
    const o = await forking.step(state, action);
    turns.push({ thought: '', action, observation: o.observation, ...(o.env ? { env: o.env } : {}) });
    state = o.state;
  }
  await forking.release(state);
  const rows: string[] = [];
  for (let k = 1; k <= 8; k++) {
    const ms = { replay: [] as number[], fork: [] as number[] };
    const steps = { replay: 0, fork: 0 };
    for (let r = 0; r < reps; r++) {
      for (const [method, env] of [
        ['replay', replaying],
        ['fork', forking],
      ] as const) {
        const t0 = performance.now();
        const s = await env.restore(prompt, turns.slice(0, k));
        ms[method].push(performance.now() - t0);
        steps[method] = env.restoreCost(s)!.steps;
        await env.release(s);
      }
    }
    const fallbacks = forking.serverLoad().forkFallbacks;
    if (fallbacks > 0) throw new Error(`${fallbacks} forks fell back to replay`);
    const r = stats(ms.replay);
    const f = stats(ms.fork);
    rows.push(`| ${k} | ${steps.replay} | ${fmt(r)} | ${steps.fork} | ${fmt(f, 1)} | ${(r.median / f.median).toFixed(0)}× |`);
  }
  return rows;
}

/** One rollout step over `urls`: wall ms, the orchestrator's CPU µs per environment step, environment steps. */
async function fleetStep(urls: string[], seed: number): Promise<{ wallMs: number; cpuUsPerStep: number; steps: number }> {
  const setup = await openEnvKind.build(
    openEnvKind.schema.parse({
      kind: 'openenv',
      url: urls,
      tasks: { from: 0, to: tasks },
      action: { text: 'action' },
      questionAfter: 'Question: ',
      successThreshold: 0.3,
      sessions,
      fork: 'off',
    }),
    { maxTurns: 4 },
  );
  const env = setup.env as Environment<unknown> & { serverLoad(): { servers: Array<{ steps: number }> } };
  env.serverLoad();
  const policy = new EmbeddedPolicy({ candidates: setup.candidates! });
  const prompts = setup.train;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await runStep({ prompts, env, policy, rng: createRng(seed), rootPlan: new Map(prompts.map((p) => [p.id, 4])), settings: { concurrency: 256 } });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const steps = env.serverLoad().servers.reduce((a, s) => a + s.steps, 0);
  return { wallMs, cpuUsPerStep: (cpu.user + cpu.system) / steps, steps };
}

async function main() {
  const urls = await Promise.all([serve(), serve(), serve(), serve()]);
  const started = new Date().toISOString();
  console.log(`bench/env-fleet: env serve (world, OpenEnv) ×4 with --step-delay-ms ${delayMs}; ${reps} repetitions; node ${process.version}; ${started}`);
  if (only !== 'fleet') {
    console.log('\n1. restore of a prefix of depth k, one server: environment steps, wall ms min / median / max\n');
    console.log('| k | replay steps | replay ms | fork steps | fork ms | replay ÷ fork (median) |');
    console.log('|---|---|---|---|---|---|');
    for (const row of await forkByDepth(urls[0]!)) console.log(row);
  }
  if (only === 'fork') return;
  console.log(`\n2. one rollout step (${tasks} tasks × 4 bare rollouts, ≤ 4 turns, the embedded policy), env.sessions=${sessions} per server\n`);
  console.log(
    '| servers | environment steps | wall s min / median / max | ideal s (steps × delay ÷ sessions) | speed-up (median) | ÷ servers | orchestrator CPU µs / env step (median) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  // Unmeasured: the first step compiles the engine's and the policy's code.
  await fleetStep(urls, 99);
  let base = 0;
  for (const n of [1, 2, 4]) {
    const runs = [];
    for (let r = 0; r < reps; r++) runs.push(await fleetStep(urls.slice(0, n), r));
    const wall = stats(runs.map((x) => x.wallMs / 1000));
    if (n === 1) base = wall.median;
    const speedup = base / wall.median;
    const steps = stats(runs.map((x) => x.steps)).median;
    const ideal = (steps * delayMs) / 1000 / (n * sessions);
    console.log(
      `| ${n} | ${steps} | ${fmt(wall, 2)} | ${ideal.toFixed(2)} | ${speedup.toFixed(2)}× | ${n === 1 ? '–' : `${(speedup / n).toFixed(2)}`} | ${stats(runs.map((x) => x.cpuUsPerStep)).median.toFixed(0)} |`,
    );
  }
}

try {
  await main();
} finally {
  for (const child of children) {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}
