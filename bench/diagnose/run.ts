/**
 * `trace-rl diagnose` on every environment kind we ship, one at a time (the machine is shared), with
 * the embedded or the environment's scripted policy at modest sizes. Prints the markdown of
 * docs/experiments/2026-12-01-diagnose.md (a table per kind) and the short summary table of
 * BENCHMARKS.md, generated from the CLI's --json output rather than copied by hand.
 *
 *   nice npx tsx bench/diagnose/run.ts [--only name,name] [--out results.json]
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));

interface Case {
  name: string;
  kind: string;
  args: string[];
}

export const CASES: readonly Case[] = [
  { name: 'simulator, scripted', kind: 'simulator', args: ['--env', 'simulator', '--policy', 'scripted', '--prompts', '256', '--k', '8'] },
  { name: 'world, embedded (untrained)', kind: 'world', args: ['--env', 'world', '--policy', 'embedded', '--prompts', '256', '--k', '8'] },
  { name: 'world, embedded (warm start)', kind: 'world', args: ['--env', 'world', '--policy', 'embedded', '--warm-start', '--prompts', '128', '--k', '8'] },
  {
    name: 'qa (bundled hotpotqa, per-question retrieval), embedded',
    kind: 'qa',
    args: ['--env', 'qa', '--policy', 'embedded', '--prompts', '256', '--k', '8'],
  },
  { name: 'math-world (inline tool), scripted', kind: 'math-world', args: ['--env', 'math-world', '--policy', 'scripted', '--prompts', '128', '--k', '8'] },
  {
    name: 'math-world (inline tool), embedded (untrained)',
    kind: 'math-world',
    args: ['--env', 'math-world', '--policy', 'embedded', '--prompts', '128', '--k', '8'],
  },
  {
    name: 'math-world (pyodide code tool), scripted',
    kind: 'math-world',
    args: ['--env', 'math-world', '--policy', 'scripted', '--set', 'env.math.tool=pyodide', '--prompts', '4', '--k', '2', '--max-turns', '4'],
  },
  { name: 'bfcl, scripted', kind: 'bfcl', args: ['--env', 'bfcl', '--policy', 'scripted', '--prompts', '48', '--k', '4', '--max-turns', '40'] },
];

interface Row {
  depth: number;
  prefixes: number;
  ended: number;
  meanV: number | null;
  contrast: number | null;
  trueContrast?: number | null;
  share: number | null;
  entropy: number | null;
  cost: { turns: number | null; tokens: number | null };
  perTokenVsRoot: number | null;
}
interface Result {
  depths: Row[];
  spend: { trajectories: number; turns: number; tokens: number };
  failed: number;
}

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));

function table(r: Result): string[] {
  const truth = r.depths.some((x) => x.trueContrast !== undefined);
  const t0 = r.depths[0]?.cost.tokens ?? null;
  const head = [
    't',
    'prefixes',
    'ended',
    'mean V',
    'V(1−V)',
    ...(truth ? ['true V(1−V)'] : []),
    'open share',
    'entropy',
    'turns',
    'tokens',
    'tokens × root',
    'V(1−V)/token × root',
  ];
  const rows = r.depths.map((x) => [
    String(x.depth),
    String(x.prefixes),
    String(x.ended),
    f(x.meanV),
    f(x.contrast),
    ...(truth ? [f(x.trueContrast)] : []),
    f(x.share),
    f(x.entropy),
    f(x.cost.turns, 2),
    f(x.cost.tokens, 1),
    x.cost.tokens !== null && t0 ? f(x.cost.tokens / t0, 2) : 'n/a',
    f(x.perTokenVsRoot, 2),
  ]);
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((c) => `| ${c.join(' | ')} |`)];
}

function main(): void {
  const argv = process.argv.slice(2);
  const only = argv.includes('--only') ? new Set(argv[argv.indexOf('--only') + 1]!.split(',')) : undefined;
  const outFile = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
  const results: Array<{ c: Case; r: Result; seconds: number }> = [];
  for (const c of CASES) {
    if (only && !only.has(c.kind)) continue;
    const t0 = performance.now();
    const p = spawnSync(process.execPath, [BIN, 'diagnose', ...c.args, '--json', '--quiet'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const seconds = (performance.now() - t0) / 1000;
    if (p.status !== 0) throw new Error(`${c.name}: exit ${p.status}: ${p.stderr}`);
    results.push({ c, r: JSON.parse(p.stdout) as Result, seconds });
    process.stderr.write(`${c.name}: ${seconds.toFixed(1)} s\n`);
  }
  // One configuration a line: readable, and a third of the size indented JSON takes.
  if (outFile) writeFileSync(outFile, `[\n${results.map(({ c, r, seconds }) => JSON.stringify({ ...c, seconds, result: r })).join(',\n')}\n]\n`);
  const out: string[] = [];
  for (const { c, r, seconds } of results) {
    out.push(
      `### ${c.name}`,
      '',
      `\`trace-rl diagnose ${c.args.join(' ')}\` — ${seconds.toFixed(1)} s wall; spent ${r.spend.trajectories} trajectories, ${r.spend.turns} policy calls, ${r.spend.tokens} tokens${r.failed ? `, ${r.failed} failed` : ''}.`,
      '',
      ...table(r),
      '',
    );
  }
  // The short table: the open share after 1, 2 and 3 turns, the next decision's entropy, and a depth-1 continuation's token cost.
  out.push(
    '### Summary',
    '',
    '| kind, policy | V(1−V) at root | open share t = 1 / 2 / 3 | entropy t = 0 / 1 | tokens of a t = 1 continuation × root | s |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const { c, r, seconds } of results) {
    const at = (t: number) => r.depths.find((x) => x.depth === t);
    const t0 = at(0)?.cost.tokens;
    const t1 = at(1)?.cost.tokens;
    out.push(
      `| ${c.name} | ${f(at(0)?.contrast)} | ${[1, 2, 3].map((t) => f(at(t)?.share, 2)).join(' / ')} | ${f(at(0)?.entropy, 2)} / ${f(at(1)?.entropy, 2)} | ${t0 && t1 != null ? f(t1 / t0, 2) : 'n/a'} | ${seconds.toFixed(0)} |`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}

main();
