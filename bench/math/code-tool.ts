/**
 * Code-tool latency: pyodide cold start (worker start + loading Python), warm run of a small cell,
 * cells per second with N workers, and the math world's in-process tool on the same cells.
 *   nice -n 10 npx tsx bench/math/code-tool.ts [--cold 3] [--warm 60] [--batch 120] [--workers 1,2]
 * Prints min / median / max in ms and a JSON summary line.
 */
import { parseArgs } from 'node:util';
import { InlineArithmeticTool, MathWorldEnv, PyodideCodeTool, worldCandidates } from '../../src/env/index.ts';

const { values } = parseArgs({
  options: {
    cold: { type: 'string', default: '3' },
    warm: { type: 'string', default: '60' },
    batch: { type: 'string', default: '120' },
    workers: { type: 'string', default: '1,2' },
  },
});
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: +s[0]!.toFixed(2), median: +s[Math.floor(s.length / 2)]!.toFixed(2), max: +s.at(-1)!.toFixed(2), n: s.length };
};

const cold: number[] = [];
for (let i = 0; i < Number(values.cold); i++) {
  const tool = new PyodideCodeTool();
  const t = performance.now();
  await tool.run('print(1)');
  cold.push(performance.now() - t);
  await tool.close();
}
console.log('cold start + first cell (ms)', stats(cold));

const cell = 'from fractions import Fraction\nprint(sum(Fraction(1, k) for k in range(1, 30)))';
const tool = new PyodideCodeTool();
await tool.warmup();
const warm: number[] = [];
for (let i = 0; i < Number(values.warm); i++) {
  const t = performance.now();
  await tool.run(cell);
  warm.push(performance.now() - t);
}
await tool.close();
console.log('warm run, harmonic sum cell (ms)', stats(warm));

const world = new MathWorldEnv({ seed: 1, problems: 40, tool: new InlineArithmeticTool() });
const cells = world.train.flatMap((p) => worldCandidates(p, []).code.map((c) => c.input)).slice(0, Number(values.batch));
const throughput: Record<string, number> = {};
for (const n of values.workers!.split(',').map(Number)) {
  const pool = new PyodideCodeTool({ workers: n });
  await pool.warmup();
  const t = performance.now();
  await Promise.all(cells.map((c) => pool.run(c)));
  throughput[`pyodide_${n}_workers_cells_per_s`] = +(cells.length / ((performance.now() - t) / 1000)).toFixed(1);
  await pool.close();
}
const inline = new InlineArithmeticTool();
const t = performance.now();
for (let r = 0; r < 100; r++) for (const c of cells) await inline.run(c);
throughput.inline_cells_per_s = Math.round((100 * cells.length) / ((performance.now() - t) / 1000));
console.log('throughput on math-world cells', throughput);
console.log(JSON.stringify({ cold: stats(cold), warm: stats(warm), ...throughput }));
