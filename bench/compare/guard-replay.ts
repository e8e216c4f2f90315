/**
 * Replays the guarded strategy's guard (src/allocate/guard.ts) on committed per-run records: for each
 * seed, grpo's run is the base part and another arm's run is what the solver's part would have yielded.
 * A step at share s is read as (1 − s) of grpo's step and s of the other arm's, at equal tokens (the
 * records are equal-token finals, so each step cost the same B): mixed prompts scale with the share.
 * That linear mixture is an approximation (a real guarded step draws its explore prompts from what grpo
 * leaves, and its groups differ); what it shows is how the guard's test reacts to the yields these arms
 * really had, and the distinct mixed prompts per token that reaction would have bought against grpo's.
 *
 * Run:  npx tsx bench/compare/guard-replay.ts [--records bench/compare/out-final-r2/records] [--grpo r2w-grpo] [--arm r2w-pcl,…]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initialGuard, nextGuard, type GuardOptions } from '../../src/allocate/index.ts';
import { pairedBootstrap } from './stats.ts';

export interface Replay {
  /** Share of the explore part at each step. */
  shares: number[];
  /** The guard's mixed prompts per step under the linear mixture, and grpo's. */
  guarded: number[];
  grpo: number[];
}

/** The guard over two runs' per-step mixed prompts (grpo's and the explore arm's), each step costing `cost`. */
export function replay(grpoMixed: readonly number[], armMixed: readonly number[], cost: number, o: GuardOptions): Replay {
  let state = initialGuard(o);
  const out: Replay = { shares: [], guarded: [], grpo: [] };
  const steps = Math.min(grpoMixed.length, armMixed.length);
  for (let t = 0; t < steps; t++) {
    const s = state.share;
    // The test counts whole prompts; the yield read out is the mixture itself, unrounded.
    const base = { mixed: Math.round((1 - s) * grpoMixed[t]!), cost: (1 - s) * cost };
    const explore = { mixed: Math.round(s * armMixed[t]!), cost: s * cost };
    out.shares.push(s);
    out.guarded.push((1 - s) * grpoMixed[t]! + s * armMixed[t]!);
    out.grpo.push(grpoMixed[t]!);
    state = nextGuard(state, { base, explore }, o);
  }
  return out;
}

interface RecordFile {
  label: string;
  seed: number;
  mixed: number[];
  total: { tokens: number };
  steps: number;
}

function load(dir: string): RecordFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RecordFile);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1]! : fallback;
  };
  const here = fileURLToPath(new URL('.', import.meta.url));
  const dir = arg('records', join(here, 'out-final-r2/records'));
  const grpoLabel = arg('grpo', 'r2w-grpo');
  const armLabels = arg('arm', 'r2w-pcl,r2w-knapsack,r2w-trace-best,r2w-trace,r2w-tree-grpo').split(',');
  const o: GuardOptions = { explore: 0.25, maxShare: 0.75, alpha: 0.05 };
  const records = load(dir);
  const grpo = new Map(records.filter((r) => r.label === grpoLabel).map((r) => [r.seed, r]));
  console.log(`guard replay on ${dir}: base ${grpoLabel}, ε ${o.explore}, maxShare ${o.maxShare}, α ${o.alpha}`);
  console.log('| explore arm | seeds | mean share | steps above ε | guarded − grpo, mixed prompts / step (95 % CI) | arm − grpo |');
  console.log('|---|---|---|---|---|---|');
  for (const label of armLabels) {
    const runs = records.filter((r) => r.label === label && grpo.has(r.seed));
    if (runs.length === 0) continue;
    const g = new Map<number, number>();
    const base = new Map<number, number>();
    const arm = new Map<number, number>();
    let shareSum = 0;
    let above = 0;
    let steps = 0;
    for (const r of runs) {
      const b = grpo.get(r.seed)!;
      const cost = b.total.tokens / b.steps;
      const x = replay(b.mixed, r.mixed, cost, o);
      const mean = (xs: number[]) => xs.reduce((a, c) => a + c, 0) / xs.length;
      g.set(r.seed, mean(x.guarded));
      base.set(r.seed, mean(x.grpo));
      arm.set(r.seed, mean(r.mixed.slice(0, x.grpo.length)));
      shareSum += x.shares.reduce((a, c) => a + c, 0);
      above += x.shares.filter((s) => s > o.explore + 1e-9).length;
      steps += x.shares.length;
    }
    const f = (d: ReturnType<typeof pairedBootstrap>) => `${d.mean.toFixed(2)} [${d.lo.toFixed(2)}, ${d.hi.toFixed(2)}]`;
    console.log(
      `| ${label} | ${runs.length} | ${(shareSum / steps).toFixed(3)} | ${above} of ${steps} | ${f(pairedBootstrap(g, base))} | ${f(pairedBootstrap(arm, base))} |`,
    );
  }
}
