/**
 * Rollout engine benchmarks (results in BENCHMARKS.md, section "Rollout engine"):
 *  1. engine overhead per turn: the simulator + its random policy through runStep vs the same
 *     episodes in a bare loop (reset → act → step); overhead = (engine − loop) / turns;
 *  2. throughput of the embedded policy on the world (turns/s, sampling + env + engine);
 *  3. a local OpenAI-format server that answers after a fixed delay d: wall time vs requests in
 *     flight c, against the ideal calls · d / c.
 * Run: npx tsx bench/rollout/run.ts [--reps 5]
 */
import { cpus } from 'node:os';
import { Simulator, WorldEnv } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { EmbeddedPolicy, OpenAIPolicy, worldCandidateSource } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import type { Turn } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { startStandIn } from '../../test/policy/openai-stand-in.ts';

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1]) || 5;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
const fmt = (x: { min: number; median: number; max: number }, d = 2) => `${x.min.toFixed(d)} / ${x.median.toFixed(d)} / ${x.max.toFixed(d)}`;

async function overhead() {
  const env = new Simulator({ seed: 1 });
  const policy = new SimulatorPolicy(env);
  const prompts = env.prompts(200);
  const m = 8;
  const per: number[] = [];
  let turns = 0;
  for (let r = 0; r < reps; r++) {
    const rng = createRng(r);
    let t0 = performance.now();
    let loopTurns = 0;
    for (const p of prompts) {
      for (let s = 0; s < m; s++) {
        let state = env.reset(p);
        const hist: Turn[] = [];
        const rr = rng.fork(`${p.id}/${s}`);
        for (let t = 0; t < 6; t++) {
          const out = await policy.act({ prompt: p, rendered: '', turns: hist, rng: rr.fork(t), maxTokens: 512 });
          const o = await env.step(state, out.action!);
          hist.push({ thought: out.thought ?? '', action: out.action!, observation: o.observation });
          loopTurns++;
          state = o.state;
          if (o.done) break;
        }
      }
    }
    const loopMs = performance.now() - t0;
    t0 = performance.now();
    const res = await runStep({ prompts, env, policy, rng, rootPlan: new Map(prompts.map((p) => [p.id, m])), settings: { concurrency: 64 } });
    const engineMs = performance.now() - t0;
    turns = res.progress.turns;
    per.push(((engineMs - loopMs) * 1000) / turns);
    void loopTurns;
  }
  return { turns, perTurnUs: stats(per) };
}

async function embedded() {
  const env = new WorldEnv({ seed: 1 });
  const policy = new EmbeddedPolicy({ candidates: worldCandidateSource(env) });
  const prompts = env.train.slice(0, 64);
  const tps: number[] = [];
  let turns = 0;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const res = await runStep({ prompts, env, policy, rng: createRng(r), rootPlan: new Map(prompts.map((p) => [p.id, 4])), settings: { concurrency: 64 } });
    turns = res.progress.turns;
    tps.push(turns / ((performance.now() - t0) / 1000));
  }
  return { turns, turnsPerSecond: stats(tps) };
}

async function server() {
  const delayMs = 40;
  const env = new WorldEnv({ seed: 1, questions: 300 });
  const prompts = env.train.filter((p) => (p.meta as { world: { hops: number } }).world.hops === 1).slice(0, 24);
  const rows: Array<{ c: number; calls: number; ideal: number; bound: number; wall: ReturnType<typeof stats>; ratio: number }> = [];
  const srv = await startStandIn({ delayMs });
  try {
    const policy = new OpenAIPolicy({ baseURLs: [srv.url], model: 'stand-in' });
    for (const c of [1, 4, 16, 64]) {
      const walls: number[] = [];
      let calls = 0;
      for (let r = 0; r < Math.min(reps, 3); r++) {
        const before = srv.requests;
        const t0 = performance.now();
        await runStep({ prompts, env, policy, rng: createRng(r), rootPlan: new Map(prompts.map((p) => [p.id, 4])), settings: { concurrency: c } });
        walls.push(performance.now() - t0);
        calls = srv.requests - before;
      }
      const ideal = (calls * delayMs) / c;
      // Each episode here is 2 dependent calls, so no concurrency beats 2 · d.
      const bound = Math.max(ideal, 2 * delayMs);
      const wall = stats(walls);
      rows.push({ c, calls, ideal, bound, wall, ratio: wall.median / bound });
    }
  } finally {
    await srv.close();
  }
  return { delayMs, rows };
}

console.log(`# rollout bench — ${new Date().toISOString().slice(0, 10)}, node ${process.version}, nproc ${cpus().length}, reps ${reps}`);
const o = await overhead();
console.log(`engine overhead per turn (µs, min/median/max), simulator, ${o.turns} turns: ${fmt(o.perTurnUs, 1)}`);
const e = await embedded();
console.log(`embedded policy on the world, 64 prompts × 4, ${e.turns} turns: turns/s ${fmt(e.turnsPerSecond, 0)}`);
const s = await server();
console.log(`stand-in server, fixed delay ${s.delayMs} ms, 24 one-hop prompts × 4 rollouts (2 calls each):`);
console.log('| in flight c | calls | calls·d/c (ms) | bound max(calls·d/c, 2d) | wall min / median / max (ms) | median / bound |');
console.log('|---|---|---|---|---|---|');
for (const r of s.rows) console.log(`| ${r.c} | ${r.calls} | ${r.ideal.toFixed(0)} | ${r.bound.toFixed(0)} | ${fmt(r.wall, 0)} | ${r.ratio.toFixed(2)} |`);
