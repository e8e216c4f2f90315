/**
 * The priced prefix solver with and without its work cap (results in BENCHMARKS.md, "Allocation
 * solvers"): time and objective on prompts whose exact programme is large, side by side in one run.
 * Run: npx tsx bench/solvers/priced-cap.ts
 */
import { PRICED_WORK_LIMIT, pricedUnits, solvePricedPrefixes } from '../../src/allocate/solvers/priced-prefix-solver.ts';

const cases = [
  { name: '32 prefixes, costs 1–3 turns, budget 1,024 turns', n: 32, costs: [1, 2, 3], budget: 1024 },
  { name: '64 prefixes, costs 1–3 turns, budget 4,000 turns', n: 64, costs: [1, 2, 3], budget: 4000 },
  { name: '32 prefixes, costs 50–800 tokens, budget 200,000 tokens', n: 32, costs: [50, 200, 800], budget: 200_000 },
];
console.log(
  `# priced prefix solver, work cap ${PRICED_WORK_LIMIT.toLocaleString('en')} steps — ${new Date().toISOString().slice(0, 10)}, node ${process.version}`,
);
console.log('| case | units (exact / capped) | exact ms | capped ms | capped ÷ exact objective |');
console.log('|---|---|---|---|---|');
for (const c of cases) {
  const input = Array.from({ length: c.n }, (_, i) => ({ id: `p${i}`, q: ((i * 37) % 100) / 100, r: i % 2, cost: c.costs[i % c.costs.length]! }));
  let t0 = performance.now();
  const exact = solvePricedPrefixes(input, c.budget, Infinity);
  const exactMs = performance.now() - t0;
  t0 = performance.now();
  const capped = solvePricedPrefixes(input, c.budget);
  const cappedMs = performance.now() - t0;
  const u = pricedUnits(input, c.budget);
  console.log(
    `| ${c.name} | ${Math.min(c.budget, 4096)} / ${u.units}${u.exact ? ' (exact)' : ''} | ${exactMs.toFixed(0)} | ${cappedMs.toFixed(0)} | ${(capped.objective / exact.objective).toFixed(4)} |`,
  );
}
