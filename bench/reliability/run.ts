/**
 * Reliability benchmark (results in BENCHMARKS.md, section "Reliability"):
 *  1. kill -9 / resume: `rounds` fresh runs of `trace-rl train`, each SIGKILLed `kills` times at seeded
 *     random moments over the length of an uninterrupted run and resumed; each final run is compared
 *     with the uninterrupted one (trees, metrics, details, checkpoints) and its ledger checked;
 *  2. malformed inputs: `runs` property-based inputs per parser (config, dataset, corpus, stdin of
 *     solve/advantages/score, GGUF), counted as rejected cleanly / valid; any mishandled input aborts.
 * The soak (faults under load for ≥ 30 minutes) is bench/reliability/soak.ts.
 * Run: npx tsx bench/reliability/run.ts [--rounds 10] [--kills 5] [--runs 2000]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createRng } from '../../src/util/rng.ts';
import { BIN, killResumeCycles, ledgerViolations, runContents } from '../../test/reliability/crash-harness.ts';
import { fuzzParser, parserCases } from '../../test/reliability/malformed.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('rounds', 10);
const kills = arg('kills', 5);
const runs = arg('runs', 2000);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};

const config = { steps: 5, pool: 8, strategy: { name: 'trace', budget: 16 }, env: { questions: 200 }, eval: { every: 2, questions: 20 } };
const root = mkdtempSync(join(tmpdir(), 'trace-bench-rel-'));
const configFile = join(root, 'config.json');
writeFileSync(configFile, JSON.stringify(config));
const whole = join(root, 'whole');
let t0 = performance.now();
const r = spawnSync(process.execPath, [BIN, 'train', '--config', configFile, '--out', whole, '--quiet'], { encoding: 'utf8' });
if (r.status !== 0) throw new Error(r.stderr);
const wallMs = performance.now() - t0;
const reference = runContents(whole);

const crash = { rounds, killsAsked: kills, delivered: 0, midRun: 0, beforeCreate: 0, identical: 0, ledgerViolations: 0, roundSeconds: [] as number[] };
for (let round = 0; round < rounds; round++) {
  t0 = performance.now();
  const dir = join(root, `cut-${round}`);
  const rep = await killResumeCycles({ configFile, dir, kills, rng: createRng(1000 + round), minDelayMs: 200, maxDelayMs: wallMs });
  crash.delivered += rep.kills;
  crash.midRun += rep.midRun;
  crash.beforeCreate += rep.beforeCreate;
  crash.ledgerViolations += ledgerViolations(dir).length;
  if (isDeepStrictEqual(runContents(dir), reference)) crash.identical++;
  crash.roundSeconds.push((performance.now() - t0) / 1000);
  console.error(`round ${round + 1}/${rounds}: ${rep.kills} kills (steps stored at each: ${rep.stepsAtKill.join(', ')})`);
}

const malformed: Array<{ parser: string; tried: number; rejected: number; accepted: number; seconds: number }> = [];
for (const c of parserCases()) {
  t0 = performance.now();
  const counts = await fuzzParser(c, runs, 7);
  malformed.push({ parser: c.name, ...counts, seconds: +((performance.now() - t0) / 1000).toFixed(1) });
  console.error(`${c.name}: ${counts.rejected} rejected, ${counts.accepted} valid of ${counts.tried}`);
}

const result = {
  bench: 'reliability/run',
  date: new Date().toISOString(),
  machine: { nproc: cpus().length, node: process.version },
  command: `npx tsx bench/reliability/run.ts --rounds ${rounds} --kills ${kills} --runs ${runs}`,
  uninterruptedRunSeconds: +(wallMs / 1000).toFixed(2),
  crash: { ...crash, roundSeconds: stats(crash.roundSeconds) },
  malformed,
};
const outDir = new URL('./results/', import.meta.url).pathname;
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `run-${result.date.replace(/[:.]/g, '-')}.json`), JSON.stringify(result, null, 2));
console.log(JSON.stringify(result, null, 2));
