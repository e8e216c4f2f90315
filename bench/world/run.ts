/**
 * Difficulty spread of the embedded multi-hop world (TRACE issue 3): the hop histogram of its test
 * questions and the histogram of per-question solve rates under the scripted policy that follows gold
 * search paths with noise (16 rollouts per question), for several world seeds (min/median/max over
 * seeds). Also the root success-probability spread of the simulator with known probabilities.
 *   npx tsx bench/world/run.ts [--seeds 5] [--rollouts 16] [--noise 0.35]
 */
import os from 'node:os';
import { Simulator, WorldEnv, worldMeta } from '../../src/env/index.ts';
import { ScriptedWorldPolicy } from '../../src/policy/index.ts';
import type { Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const seeds = arg('seeds', 5);
const rollouts = arg('rollouts', 16);
const noise = arg('noise', 0.35);
const BUCKETS = ['0', '(0, 0.2)', '[0.2, 0.4)', '[0.4, 0.6)', '[0.6, 0.8)', '[0.8, 1)', '1'];
const bucket = (r: number) => (r === 0 ? 0 : r === 1 ? 6 : 1 + Math.min(4, Math.floor(r * 5)));

async function solveRate(env: WorldEnv, policy: ScriptedWorldPolicy, p: Prompt, seed: number): Promise<number> {
  let wins = 0;
  for (let i = 0; i < rollouts; i++) {
    const rng = createRng(seed).fork(`${p.id}/${i}`);
    const turns: Turn[] = [];
    let state = env.reset(p);
    for (;;) {
      const out = await policy.act({ prompt: p, rendered: '', turns, rng, maxTokens: 64 });
      const step = await env.step(state, out.action!);
      turns.push({ thought: out.thought ?? '', action: out.action!, observation: step.observation });
      state = step.state;
      if (step.done) {
        wins += step.reward ?? 0;
        break;
      }
    }
  }
  return wins / rollouts;
}

const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
  return `${f(s[0]!)} / ${f(s[Math.floor(s.length / 2)]!)} / ${f(s[s.length - 1]!)}`;
};

console.log(
  `machine: ${os.cpus().length} cpus, node ${process.version}, ${new Date().toISOString().slice(0, 10)}; seeds 1..${seeds}, ${rollouts} rollouts/question, noise ${noise}`,
);
const hopCounts: number[][] = [[], [], [], []];
const bucketShares: number[][] = BUCKETS.map(() => []);
const byHop: number[][] = [[], [], [], []];
const sizes: number[] = [];
const seconds: number[] = [];
for (let seed = 1; seed <= seeds; seed++) {
  const t0 = performance.now();
  const env = new WorldEnv({ seed });
  const policy = new ScriptedWorldPolicy(env, { noise });
  const rates: Array<{ hops: number; rate: number }> = [];
  for (const p of env.test) rates.push({ hops: worldMeta(p).hops, rate: await solveRate(env, policy, p, seed) });
  sizes.push(env.test.length);
  for (let h = 1; h <= 4; h++) {
    const hs = rates.filter((r) => r.hops === h);
    hopCounts[h - 1]!.push(hs.length);
    byHop[h - 1]!.push(hs.reduce((a, r) => a + r.rate, 0) / Math.max(1, hs.length));
  }
  BUCKETS.forEach((_, b) => bucketShares[b]!.push(rates.filter((r) => bucket(r.rate) === b).length / rates.length));
  seconds.push((performance.now() - t0) / 1000);
}
console.log(`test questions per seed: ${fmt(sizes)}; seconds per seed: ${fmt(seconds)}`);
console.log('\n| hops | questions (min/med/max over seeds) | mean solve rate |');
console.log('| --- | --- | --- |');
for (let h = 1; h <= 4; h++) console.log(`| ${h} | ${fmt(hopCounts[h - 1]!)} | ${fmt(byHop[h - 1]!)} |`);
console.log('\n| solve rate | share of questions (min/med/max over seeds) |');
console.log('| --- | --- |');
BUCKETS.forEach((b, i) => console.log(`| ${b} | ${fmt(bucketShares[i]!)} |`));

const simBuckets: number[][] = BUCKETS.map(() => []);
for (let seed = 1; seed <= seeds; seed++) {
  const sim = new Simulator({ seed });
  const vs = sim.prompts(500).map((p) => sim.trueSuccess(p, []));
  const sb = (v: number) => (v < 0.05 ? 0 : v > 0.95 ? 6 : 1 + Math.min(4, Math.floor(v * 5)));
  BUCKETS.forEach((_, b) => simBuckets[b]!.push(vs.filter((v) => sb(v) === b).length / vs.length));
}
console.log('\nSimulator, 500 prompts per seed, exact root success probability V:');
console.log('| V | share of prompts (min/med/max over seeds) |');
console.log('| --- | --- |');
['< 0.05', '[0.05, 0.2)', '[0.2, 0.4)', '[0.4, 0.6)', '[0.6, 0.8)', '[0.8, 0.95]', '> 0.95'].forEach((b, i) =>
  console.log(`| ${b} | ${fmt(simBuckets[i]!)} |`),
);
