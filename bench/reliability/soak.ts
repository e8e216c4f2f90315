/**
 * Soak: TRACE rollout steps for a fixed wall time against a fault-injecting OpenAI-compatible server
 * (default 20% of requests fail: 5xx, hang past the timeout, closed connection, malformed JSON,
 * truncated JSON, broken tool call) and a world environment whose tool calls fail at 5% (throw /
 * hang). Each step: pool from the world → Ṽ scores (MLP predictor) → runStep (trace strategy, budget
 * B) → predictor update → the step's trees, metrics and predictor checkpoint written to a RunStore,
 * then dropped. Checked every step: ledger trajectories = leaves of the stored trees. Heap is
 * sampled after a forced GC (run with --expose-gc) to show memory stays bounded.
 *
 * Run: node --expose-gc --import tsx bench/reliability/soak.ts --minutes 30 [--rate 0.2] [--tool-rate 0.05]
 * Writes bench/reliability/results/soak-<iso>.json after every step (a killed soak keeps its figures).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createStrategy } from '../../src/allocate/index.ts';
import { WorldEnv } from '../../src/env/index.ts';
import { startFaultServer, withToolFaults } from '../../src/faults/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { createMlpPredictor, evaluateThenTrain, samplesFromTrees } from '../../src/predict/index.ts';
import { runStep, type Scorer } from '../../src/rollout/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { drawPool } from '../../src/train/index.ts';
import { leaves } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const minutes = arg('minutes', 30);
const rate = arg('rate', 0.2);
const toolRate = arg('tool-rate', 0.05);
const budget = arg('budget', 64);
const pool = arg('pool', 32);
const seed = arg('seed', 0);

const gc = (globalThis as { gc?: () => void }).gc;
const heapMB = () => {
  gc?.();
  return +(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1);
};
const rssMB = () => +(process.memoryUsage().rss / 2 ** 20).toFixed(1);

const outDir = new URL('./results/', import.meta.url).pathname;
mkdirSync(outDir, { recursive: true });
const started = new Date().toISOString();
const resultFile = join(outDir, `soak-${started.replace(/[:.]/g, '-')}.json`);

const env = new WorldEnv({ seed: 7, questions: 1500 });
const faulty = withToolFaults(env, { rate: toolRate, seed });
const server = await startFaultServer({ rate, seed });
const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'soak' });
const predictor = await createMlpPredictor({ seed, replaySteps: 4 });
const strategy = createStrategy('trace', { budget, continuations: 2 });
const runDir = mkdtempSync(join(tmpdir(), 'trace-soak-'));
const store = RunStore.create(join(runDir, 'run'), { soak: { minutes, rate, toolRate, budget, pool, seed } });
const settings = { concurrency: 8, maxTurns: 4, timeoutMs: 1500, retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 200 } };

const totals = { steps: 0, trajectories: 0, leaves: 0, unbalancedSteps: 0, retries: 0, dropped: 0, failures: {} as Record<string, number>, turns: 0 };
const memory: Array<{ step: number; minutes: number; heapMB: number; rssMB: number }> = [];
const heapStart = heapMB();
memory.push({ step: 0, minutes: 0, heapMB: heapStart, rssMB: rssMB() });
const t0 = performance.now();
const deadline = t0 + minutes * 60_000;

const write = (finished: boolean) => {
  const result = {
    bench: 'reliability/soak',
    started,
    finished,
    machine: { nproc: cpus().length, node: process.version },
    command: `node --expose-gc --import tsx bench/reliability/soak.ts --minutes ${minutes} --rate ${rate} --tool-rate ${toolRate}`,
    settings: { rate, toolRate, budget, pool, seed, engine: settings },
    wallMinutes: +((performance.now() - t0) / 60_000).toFixed(2),
    ...totals,
    serverRequests: server.requests(),
    serverFaults: server.counts,
    toolFaults: faulty.toolFaults,
    storedSteps: store.lastStep() + 1,
    memory: { start: memory[0], end: memory.at(-1), peakHeapMB: Math.max(...memory.map((m) => m.heapMB)), samples: memory },
  };
  writeFileSync(resultFile, JSON.stringify(result, null, 2));
};

for (let step = 0; performance.now() < deadline; step++) {
  const prompts = drawPool(env.train, pool, step, seed);
  const scorer: Scorer = (hs) => predictor.predict(hs);
  let retries = 0;
  const res = await runStep({
    prompts,
    env: faulty,
    policy,
    rng: createRng(seed).fork(`step/${step}`),
    strategy,
    scorer,
    settings,
    onEvent: (e) => void (e.kind === 'retry' && retries++),
  });
  const spent = res.spend.bare + res.spend.continuation;
  const leafCount = res.trees.reduce((n, t) => n + leaves(t).length, 0);
  const { training } = await evaluateThenTrain(predictor, samplesFromTrees(res.trees, prompts, { leaves: false }));
  store.writeStep({
    step,
    metrics: { cost_trajectories: spent, leaves: leafCount, retries, ...(training.loss !== undefined ? { pred_loss: training.loss } : {}) },
    details: { failures: res.failures },
    trees: res.trees,
    checkpoints: { predictor: predictor.save() },
  });
  // Check against what was stored, not what is in memory: the store is the record of the run.
  const stored = store.trees(step).reduce((n, t) => n + leaves(t).length, 0);
  totals.steps++;
  totals.trajectories += spent;
  totals.leaves += stored;
  if (stored !== spent || spent > budget) totals.unbalancedSteps++;
  totals.retries += retries;
  totals.turns += res.spend.turns;
  for (const [k, v] of Object.entries(res.failures)) {
    totals.failures[k] = (totals.failures[k] ?? 0) + v;
    totals.dropped += v;
  }
  if (step % 10 === 9 || performance.now() >= deadline)
    memory.push({ step: step + 1, minutes: +((performance.now() - t0) / 60_000).toFixed(2), heapMB: heapMB(), rssMB: rssMB() });
  write(false);
}
memory.push({ step: totals.steps, minutes: +((performance.now() - t0) / 60_000).toFixed(2), heapMB: heapMB(), rssMB: rssMB() });
write(true);
store.close();
await server.close();
console.log(
  JSON.stringify({
    resultFile,
    steps: totals.steps,
    trajectories: totals.trajectories,
    leaves: totals.leaves,
    unbalancedSteps: totals.unbalancedSteps,
    retries: totals.retries,
    dropped: totals.dropped,
    serverFaults: server.counts,
    toolFaults: faulty.toolFaults,
    heapStart,
    heapEnd: memory.at(-1)!.heapMB,
  }),
);
