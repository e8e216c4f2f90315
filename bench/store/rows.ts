/**
 * A step's trees written to and read from `run.sqlite` two ways, side by side in one process,
 * alternating per repetition: `json` (each tree as JSON text, as runs were stored before) and
 * `binary` (store/tree-codec.ts: the JSON without token spans, the spans' numbers as binary arrays).
 * Synthetic trees as the scale bench's step: P prompts × 8 trajectories × 5 turns × T tokens a turn,
 * with ids, log-probabilities and masks on every turn. Reports per way: encode + insert seconds (one
 * transaction, as a step is written), read + decode seconds, and the file's size; min / median / max.
 * Run: npx tsx bench/store/rows.ts [--prompts 512] [--tokens 500] [--reps 3]
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeTree, encodeTree } from '../../src/store/tree-codec.ts';
import type { RolloutTree, TreeNode } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

const arg = (name: string, d: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : d);
const P = Number(arg('--prompts', '512'));
const T = Number(arg('--tokens', '500'));
const reps = Number(arg('--reps', '3'));

function trees(): RolloutTree[] {
  const rng = createRng(1);
  return Array.from({ length: P }, (_, p) => {
    const nodes: Record<string, TreeNode> = { [`q${p}`]: { id: `q${p}`, parent: null, depth: 0, children: [], origin: 'root' } };
    for (let g = 0; g < 8; g++) {
      let parent = `q${p}`;
      for (let d = 1; d <= 5; d++) {
        const id = `${parent}/${d === 1 ? g : 0}`;
        const ids = Array.from({ length: T }, () => Math.floor(rng.next() * 151_000));
        nodes[parent]!.children.push(id);
        nodes[id] = {
          id,
          parent,
          depth: d,
          children: [],
          origin: 'bare',
          turn: {
            thought: 'thinking about it',
            action: { type: d === 5 ? 'answer' : 'search', input: 'a query' },
            observation: d === 5 ? '' : '<information>'.padEnd(600, 'x') + '</information>',
            text: 't'.repeat(T * 4),
            tokens: { ids, logprobs: ids.map(() => -rng.next() * 3), mask: ids.map(() => 1), prompt: 'ids' },
            generatedTokens: T,
            logprob: -rng.next() * 100,
          },
          ...(d === 5 ? { end: 'answer' as const, reward: g % 2 } : {}),
        };
        parent = id;
      }
    }
    return { promptId: `q${p}`, prompt: 'Answer the question. '.repeat(20), nodes };
  });
}

const step = trees();
const dir = mkdtempSync(join(tmpdir(), 'trace-rl-rows-'));
const ways = { json: (t: RolloutTree) => JSON.stringify(t), binary: encodeTree } as const;
const results: Record<string, { write: number[]; read: number[]; mb: number[] }> = {};
for (let rep = 0; rep < reps; rep++)
  for (const [name, encode] of rep % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
    const file = join(dir, `${name}-${rep}.sqlite`);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE trees (step INTEGER NOT NULL, prompt_id TEXT NOT NULL, tree TEXT NOT NULL, PRIMARY KEY (step, prompt_id))');
    const ins = db.prepare('INSERT INTO trees (step, prompt_id, tree) VALUES (?, ?, ?)');
    const t0 = performance.now();
    db.transaction(() => {
      for (const t of step) ins.run(0, t.promptId, encode(t));
    })();
    const t1 = performance.now();
    const back = (db.prepare('SELECT tree FROM trees WHERE step = 0 ORDER BY rowid').all() as Array<{ tree: Buffer | string }>).map((r) => decodeTree(r.tree));
    const t2 = performance.now();
    if (back.length !== step.length) throw new Error('rows lost');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const r = (results[name] ??= { write: [], read: [], mb: [] });
    r.write.push((t1 - t0) / 1000);
    r.read.push((t2 - t1) / 1000);
    r.mb.push(statSync(file).size / 2 ** 20);
  }
rmSync(dir, { recursive: true, force: true });
const mmm = (xs: number[], d = 2) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(d)} / ${s[Math.floor(s.length / 2)]!.toFixed(d)} / ${s.at(-1)!.toFixed(d)}`;
};
console.log(`# run.sqlite tree rows — ${new Date().toISOString()}, ${P} prompts × 8 trajectories × 5 turns × ${T} tokens, ${reps} repetitions`);
console.log('| rows | write s (encode + insert) | read s (select + decode) | file MB |\n|---|---|---|---|');
for (const [name, r] of Object.entries(results)) console.log(`| ${name} | ${mmm(r.write)} | ${mmm(r.read)} | ${mmm(r.mb, 0)} |`);
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `binary ÷ json, medians: write ${(med(results.binary!.write) / med(results.json!.write)).toFixed(2)}×, read ${(med(results.binary!.read) / med(results.json!.read)).toFixed(2)}×, size ${(med(results.binary!.mb) / med(results.json!.mb)).toFixed(2)}×`,
);
