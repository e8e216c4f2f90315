/**
 * The embedded policy at step 0, cold vs warm-started (behaviour cloning on scripted demonstrations,
 * src/train/warm-start.ts), per question kind: median turns of sampled rollouts, the share of sampled
 * rollouts with at least one intermediate prefix (≥ 2 turns: something to expand), and greedy
 * held-out accuracy. Issue 13's targets: bridge median turns ≥ 3, ≥ 70 % with a prefix, greedy
 * accuracy in [0.25, 0.45].
 *
 * Run: npx tsx bench/warm-start/run.ts [--modes none,bc,scripted] [--by-hops] [--seeds 0,1,2] [--env-seed 7] [--noise 0.35] [--demos 2]
 *                                      [--epochs 60] [--lr 0.05] [--test 500] [--sampled 256]
 */
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { WorldEnv, worldMeta } from '../../src/env/index.ts';
import { ScriptedWorldPolicy } from '../../src/policy/index.ts';
import type { Prompt } from '../../src/tree/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { buildComponents, parseTrainConfig } from '../../src/train/index.ts';
import { rewardedLeaves, leaves } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}
const seeds = arg('seeds', '0,1,2').split(',').map(Number);
const envSeed = Number(arg('env-seed', '7'));
const bc = {
  noise: Number(arg('noise', 'NaN')),
  demosPerPrompt: Number(arg('demos', 'NaN')),
  epochs: Number(arg('epochs', 'NaN')),
  learningRate: Number(arg('lr', 'NaN')),
};
const nTest = Number(arg('test', '500'));
const nSampled = Number(arg('sampled', '256'));
const modes = arg('modes', 'none,bc').split(',');
// A private cache: the bench measures the fit itself, never a file an earlier version wrote.
const cache = mkdtempSync(join(os.tmpdir(), 'warm-start-bench-'));
process.env.TRACE_RL_CACHE = cache;

interface Row {
  n: number;
  turns: number[];
  withPrefix: number;
  greedyN: number;
  greedySolved: number;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

const lines: string[] = [];
for (const mode of modes) {
  const perSeed: Array<Map<string, Row>> = [];
  for (const seed of seeds) {
    const bcGiven = Object.fromEntries(Object.entries(bc).filter(([, v]) => Number.isFinite(v)));
    const config = parseTrainConfig({
      seed,
      env: { seed: envSeed },
      policy: { warmStart: mode === 'bc' ? 'bc' : 'none', ...(mode === 'bc' ? { bc: bcGiven } : {}) },
    });
    const t0 = performance.now();
    const parts = await buildComponents(config);
    // 'scripted': the demonstrator itself (noise --noise or 0.35), the teacher the clone is fitted to.
    if (mode === 'scripted') parts.policy = new ScriptedWorldPolicy(parts.env as WorldEnv, { noise: Number.isFinite(bc.noise) ? bc.noise : 0.35 });
    const fitSeconds = (performance.now() - t0) / 1000;
    const byHops = process.argv.includes('--by-hops');
    const kindOf = (p: Prompt) => (byHops ? `${worldMeta(p).kind} (${worldMeta(p).hops} hops)` : worldMeta(p).kind);
    const rows = new Map<string, Row>();
    const row = (k: string) => rows.get(k) ?? (rows.set(k, { n: 0, turns: [], withPrefix: 0, greedyN: 0, greedySolved: 0 }), rows.get(k)!);
    const sampledPrompts = parts.train.slice(0, nSampled);
    const sampled = await runStep({
      prompts: sampledPrompts,
      env: parts.env,
      policy: parts.policy,
      rng: createRng(seed).fork('bench/sampled'),
      rootPlan: new Map(sampledPrompts.map((p) => [p.id, 4])),
      settings: config.engine,
    });
    const byId = new Map(parts.train.map((p) => [p.id, p]));
    for (const tree of sampled.trees) {
      const r = row(kindOf(byId.get(tree.promptId)!));
      for (const leaf of leaves(tree)) {
        r.n++;
        r.turns.push(leaf.depth);
        if (leaf.depth >= 2) r.withPrefix++;
      }
    }
    const test = parts.test.slice(0, nTest);
    const greedy = await runStep({
      prompts: test,
      env: parts.env,
      policy: parts.policy,
      rng: createRng(seed).fork('bench/greedy'),
      rootPlan: new Map(test.map((p) => [p.id, 1])),
      greedy: true,
      settings: config.engine,
    });
    const testById = new Map(test.map((p) => [p.id, p]));
    for (const tree of greedy.trees) {
      const r = row(kindOf(testById.get(tree.promptId)!));
      for (const leaf of rewardedLeaves(tree)) {
        r.greedyN++;
        r.greedySolved += leaf.reward!;
      }
    }
    perSeed.push(rows);
    process.stderr.write(`${mode} seed ${seed}: built in ${fitSeconds.toFixed(1)} s\n`);
  }
  const kinds = [...new Set(perSeed.flatMap((m) => [...m.keys()]))].sort();
  lines.push(
    `### warm start: ${mode}${mode === 'bc' ? ` ${JSON.stringify(bc)}` : ''} (seeds ${seeds.join(', ')}, env seed ${envSeed})`,
    '',
    '| kind | sampled rollouts | median turns | share with ≥ 1 intermediate prefix | greedy held-out acc. (per seed) |',
    '|---|---|---|---|---|',
  );
  for (const k of [...kinds, 'all']) {
    const rs =
      k === 'all'
        ? perSeed.map((m) => {
            const a: Row = { n: 0, turns: [], withPrefix: 0, greedyN: 0, greedySolved: 0 };
            for (const r of m.values()) {
              a.n += r.n;
              a.turns.push(...r.turns);
              a.withPrefix += r.withPrefix;
              a.greedyN += r.greedyN;
              a.greedySolved += r.greedySolved;
            }
            return a;
          })
        : perSeed.map((m) => m.get(k)!).filter(Boolean);
    const n = rs.reduce((s, r) => s + r.n, 0);
    const turns = rs.flatMap((r) => r.turns);
    const pre = rs.reduce((s, r) => s + r.withPrefix, 0);
    const acc = rs.map((r) => (r.greedySolved / Math.max(1, r.greedyN)).toFixed(3));
    lines.push(
      `| ${k} | ${n} | ${median(turns)} (mean ${(turns.reduce((a, b) => a + b, 0) / Math.max(1, turns.length)).toFixed(2)}) | ${(pre / Math.max(1, n)).toFixed(2)} | ${acc.join(' / ')} |`,
    );
  }
  lines.push('');
}
rmSync(cache, { recursive: true, force: true });
process.stdout.write(
  `machine: ${os.cpus().length} cores, node ${process.version}, load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}\n\n${lines.join('\n')}\n`,
);
