/**
 * TRACE vs GRPO on BFCL v4 multi-turn with the scripted noisy policy (CPU only), at equal budget:
 * the effective ratio (share of prompts in a step whose tree has both a success and a failure) and
 * mixed trees per 100 trajectories. Runs `trace-rl compare` (seeds 0..n-1 per strategy) on one
 * configuration and reads every run's per-step metrics from its run.sqlite; reports per-strategy
 * min/median/max over seeds and the paired trace − grpo difference per seed.
 *   npx tsx bench/bfcl/run.ts [--seeds 3] [--steps 4] [--budget 64] [--pool 16] [--env-seed 101] [--out /tmp/bfcl-bench]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const seeds = Number(arg('seeds', '3'));
const out = arg('out', join(os.tmpdir(), 'bfcl-bench'));
const config = {
  env: { kind: 'bfcl', seed: Number(arg('env-seed', '101')) },
  engine: { maxTurns: 60 },
  steps: Number(arg('steps', '4')),
  pool: Number(arg('pool', '16')),
  strategy: { budget: Number(arg('budget', '64')) },
  eval: { every: 1000, questions: 20 },
};
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'config.json'), JSON.stringify(config));
const bin = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
const t0 = performance.now();
execFileSync(
  process.execPath,
  [bin, 'compare', '--config', join(out, 'config.json'), '--strategies', 'trace,grpo', '--seeds', String(seeds), '--out', join(out, 'runs'), '--jobs', '2'],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
const seconds = (performance.now() - t0) / 1000;

interface RunStats {
  effective: number;
  mixedPer100: number;
  reward: number;
}
function read(strategy: string, seed: number): RunStats {
  const db = new Database(join(out, 'runs', `${strategy}-s${seed}`, 'run.sqlite'), { readonly: true });
  const rows = (db.prepare('SELECT metrics FROM steps ORDER BY step').all() as { metrics: string }[]).map(
    (r) => JSON.parse(r.metrics) as Record<string, number>,
  );
  db.close();
  const sum = (k: string) => rows.reduce((s, m) => s + (m[k] ?? 0), 0);
  return {
    effective: sum('effective_ratio') / rows.length,
    mixedPer100: (100 * sum('mixed_prompts')) / sum('cost_trajectories'),
    reward: sum('reward_mean') / rows.length,
  };
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(3)} / ${s[Math.floor((s.length - 1) / 2)]!.toFixed(3)} / ${s.at(-1)!.toFixed(3)}`;
};
const runs = { trace: [] as RunStats[], grpo: [] as RunStats[] };
for (let s = 0; s < seeds; s++) {
  runs.trace.push(read('trace', s));
  runs.grpo.push(read('grpo', s));
}
console.log(
  `machine: ${os.cpus().length} cpus (${os.cpus()[0]?.model}), load ${os.loadavg()[0]!.toFixed(1)}, node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${seconds.toFixed(0)} s wall`,
);
console.log(`config: ${JSON.stringify(config)}; seeds 0..${seeds - 1}`);
console.log('metric (min / median / max over seeds)     trace                  grpo                   trace − grpo (paired)');
for (const [name, key] of [
  ['effective ratio', 'effective'],
  ['mixed trees per 100 trajectories', 'mixedPer100'],
  ['mean reward', 'reward'],
] as const) {
  const diff = runs.trace.map((t, i) => t[key] - runs.grpo[i]![key]);
  console.log(`${name.padEnd(42)} ${stats(runs.trace.map((r) => r[key])).padEnd(22)} ${stats(runs.grpo.map((r) => r[key])).padEnd(22)} ${stats(diff)}`);
}
