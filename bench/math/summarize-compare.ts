/**
 * Summarises a `trace-rl compare --env math-world` folder: per run, the mean effective ratio over
 * steps, mixed trees (prompts with both outcomes) per 100 trajectories, and the last held-out
 * accuracy; per strategy the mean over seeds; and trace − grpo paired by seed with a t interval.
 *   npx tsx bench/math/summarize-compare.ts <compare-folder>
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

const dir = process.argv[2];
if (!dir) throw new Error('usage: summarize-compare.ts <compare-folder>');
type Row = { eff: number; mixedPer100: number; acc: number };
const runs = new Map<string, Row>();
for (const name of readdirSync(dir)) {
  const file = path.join(dir, name, 'run.sqlite');
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true });
  } catch {
    continue;
  }
  const steps = db
    .prepare('select metrics from steps order by step')
    .all()
    .map((r) => JSON.parse((r as { metrics: string }).metrics) as Record<string, number>);
  db.close();
  if (steps.length === 0) continue;
  const eff = steps.reduce((a, m) => a + m.effective_ratio!, 0) / steps.length;
  const mixed = steps.reduce((a, m) => a + m.mixed_prompts!, 0);
  const traj = steps.reduce((a, m) => a + m.cost_trajectories!, 0);
  const acc = [...steps].reverse().find((m) => m.test_accuracy !== undefined)?.test_accuracy ?? NaN;
  runs.set(name, { eff, mixedPer100: (100 * mixed) / traj, acc });
  console.log(name, `steps ${steps.length}`, `eff ${eff.toFixed(3)}`, `mixed/100traj ${((100 * mixed) / traj).toFixed(2)}`, `test_acc ${acc.toFixed(3)}`);
}
const seeds = [...new Set([...runs.keys()].map((k) => k.split('-s')[1]!))].sort();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const T975: Record<number, number> = { 1: 12.71, 2: 4.3, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45 };
for (const key of ['eff', 'mixedPer100', 'acc'] as const) {
  const t = seeds.map((s) => runs.get(`trace-s${s}`)?.[key]).filter((x): x is number => x !== undefined);
  const g = seeds.map((s) => runs.get(`grpo-s${s}`)?.[key]).filter((x): x is number => x !== undefined);
  const d = seeds.filter((s) => runs.has(`trace-s${s}`) && runs.has(`grpo-s${s}`)).map((s) => runs.get(`trace-s${s}`)![key] - runs.get(`grpo-s${s}`)![key]);
  const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean(d)) ** 2, 0) / Math.max(1, d.length - 1));
  const half = d.length > 1 ? (T975[d.length - 1]! * sd) / Math.sqrt(d.length) : NaN;
  console.log(
    `${key}: trace ${mean(t).toFixed(3)} (n=${t.length}) grpo ${mean(g).toFixed(3)} (n=${g.length}) paired diff ${mean(d).toFixed(3)} ± ${half.toFixed(3)} (95% t, n=${d.length})`,
  );
}
