/**
 * What confinement costs (issue 31): the confined pyodide tool against the worker-thread tool it
 * replaced, side by side in one run, as ratios. Measured for both:
 *  - cold start: a new tool until its first cell has printed;
 *  - new trajectory: a cell with no history on a warmed tool (confined: a fresh process, started
 *    ahead, from the memory snapshot; the old tool had no reset, so its number is a warm cell);
 *  - fresh trajectories back to back: cells with no history, one after another (confined: each needs
 *    a new process, so this is the sustained cost of a fresh interpreter);
 *  - warm cell: the next cell of the same trajectory (confined: the trajectory's own process).
 * The old tool comes from a git worktree of the commit before the change (`--baseline DIR`, made with
 * `git worktree add DIR 5937fea`; its node_modules can be a symlink to this checkout's).
 *   nice -n 10 npx tsx bench/math/sandbox-cost.ts --baseline /tmp/trace-rl-5937fea [--rounds 5] [--warm 40]
 * Prints min / median / max in ms per measure and tool, the ratios, and a JSON line.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { PyodideCodeTool } from '../../src/env/index.ts';
import type { CodeTool } from '../../src/env/math/code-tool.ts';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    warm: { type: 'string', default: '40' },
    fresh: { type: 'string', default: '10' },
  },
});
if (!values.baseline) throw new Error('--baseline DIR: a worktree of the commit before the confined tool (git worktree add DIR 5937fea)');
const old = (await import(pathToFileURL(resolve(values.baseline, 'src/env/math/pyodide-tool.ts')).href)) as {
  PyodideCodeTool: new (o?: object) => CodeTool & { warmup(): Promise<void> };
};

type Tool = CodeTool & { warmup(): Promise<void> };
const tools: Record<string, () => Tool> = { confined: () => new PyodideCodeTool(), workerThread: () => new old.PyodideCodeTool() };
const cell = 'from fractions import Fraction\nprint(sum(Fraction(1, k) for k in range(1, 30)))';
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: +s[0]!.toFixed(1), median: +s[Math.floor(s.length / 2)]!.toFixed(1), max: +s.at(-1)!.toFixed(1), n: s.length };
};
const timed = async (f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

const samples: Record<string, Record<string, number[]>> = {};
const add = (measure: string, name: string, ms: number) => ((samples[measure] ??= {})[name] ??= []).push(ms);

// Rounds alternate the two tools so that a load change on the machine falls on both.
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, make] of Object.entries(tools)) {
    const tool = make();
    add('cold start + first cell', name, await timed(() => tool.run('print(1)')));
    await tool.warmup();
    // Let the confined tool's spare process finish starting, as it would between turns.
    await new Promise((r) => setTimeout(r, 2500));
    add('new trajectory, first cell', name, await timed(() => tool.run(cell)));
    const history = [cell];
    for (let i = 0; i < Number(values.warm); i++) {
      const code = `x${i} = ${i}\n${cell}`;
      add('warm cell (same trajectory)', name, await timed(() => tool.run(code, { history })));
      history.push(code);
    }
    for (let i = 0; i < Number(values.fresh); i++) add('fresh trajectories back to back', name, await timed(() => tool.run(cell)));
    await tool.close();
  }
  process.stderr.write(`round ${round + 1}/${values.rounds}\n`);
}

const summary: Record<string, unknown> = {};
for (const [measure, byTool] of Object.entries(samples)) {
  const c = stats(byTool.confined!);
  const w = stats(byTool.workerThread!);
  summary[measure] = { confined: c, workerThread: w, ratioOfMedians: +(c.median / w.median).toFixed(2) };
  console.log(
    `${measure}: confined ${c.median} ms [${c.min}, ${c.max}], worker thread ${w.median} ms [${w.min}, ${w.max}], ratio ${(c.median / w.median).toFixed(2)}×`,
  );
}
console.log(JSON.stringify(summary));
