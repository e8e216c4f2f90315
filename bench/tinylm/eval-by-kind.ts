/**
 * A world evaluation's trajectories by question kind: success, mean and median turns, and the share of
 * trajectories that search before answering (issue 18's "multi-turn trajectories as the norm").
 *   npx tsx bench/tinylm/eval-by-kind.ts <eval folder>/trajectories.jsonl [--env-seed 7] [--questions 1500]
 * Reads the file `trace-rl eval --env world --out <folder>` writes; the world must be the one evaluated
 * (the defaults are trace-rl eval's), since question kinds come from it. Prints a Markdown table.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WorldEnv } from '../../src/env/index.ts';
import { questionKind } from '../compare/by-kind.ts';
import type { RolloutTree } from '../../src/tree/types.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'env-seed': { type: 'string', default: '7' }, questions: { type: 'string', default: '1500' } },
});
if (positionals.length !== 1) throw new Error('usage: npx tsx bench/tinylm/eval-by-kind.ts <trajectories.jsonl> [--env-seed 7] [--questions 1500]');
const env = new WorldEnv({ seed: Number(values['env-seed']), questions: Number(values.questions), topK: 3, maxTurns: 6 });
const kind = new Map(env.test.map((p) => [p.id, questionKind(p)]));
const rows = readFileSync(positionals[0]!, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { id: string; metrics: { accuracy: number }; tree: RolloutTree });

const by = new Map<string, { ok: number; turns: number[]; searched: number }>();
for (const r of rows) {
  const k = kind.get(r.id);
  if (k === undefined) throw new Error(`${r.id} is not a test question of world seed ${values['env-seed']} with ${values.questions} questions`);
  const nodes = Object.values(r.tree.nodes);
  // One greedy rollout per question: its deepest node is the answer (or the last turn).
  const turns = Math.max(...nodes.map((n) => n.depth));
  const searched = nodes.some((n) => n.turn?.action.type === 'search') ? 1 : 0;
  for (const key of ['all', k]) {
    const e = by.get(key) ?? { ok: 0, turns: [], searched: 0 };
    e.ok += r.metrics.accuracy;
    e.turns.push(turns);
    e.searched += searched;
    by.set(key, e);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('| question kind (n) | success | mean turns | median turns | search before answering |\n|---|---|---|---|---|');
for (const [k, e] of [...by].sort(([a], [b]) => (a === 'all' ? -1 : b === 'all' ? 1 : a.localeCompare(b)))) {
  const n = e.turns.length;
  console.log(
    `| ${k} (${n}) | ${(e.ok / n).toFixed(3)} | ${(e.turns.reduce((a, b) => a + b, 0) / n).toFixed(2)} | ${median(e.turns)} | ${((100 * e.searched) / n).toFixed(0)} % |`,
  );
}
