/**
 * One measurement of the split-step bench (workers.ts), in a process of its own: the scale bench's
 * step (P prompts × 8 rollouts of ≤ 5 turns, OpenAIPolicy in completions mode, the scripted server at
 * `--port`) run in this process (`--workers 1`) or split across N worker processes by prompt. The
 * workers are started and warmed up first (their start is reported apart), so the measured step is
 * the rollouts. Prints one JSON line: requests, wall ms, CPU µs of this process and of each worker,
 * each worker's own requests and wall ms, peak RSS of each process.
 */
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { runStep, type StepOptions } from '../../src/rollout/index.ts';
import { runSplitStep, StepWorkerPool, type WorkerStats } from '../../src/rollout/split/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { MAX_TURNS, ROLLOUTS_PER_PROMPT, ScaleEnv, scalePrompts } from './script.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const workers = Number(arg('workers', '1'));
const trajectories = Number(arg('trajectories', '2000'));
const concurrency = Number(arg('concurrency', '256'));
const port = Number(arg('port', '0'));

const policy = new OpenAIPolicy({ baseURLs: [`http://127.0.0.1:${port}/v1`], model: 'scale', mode: 'completions', extras: 'vllm' });
const env = new ScaleEnv();
const t0 = performance.now();
const pool =
  workers > 1 ? await StepWorkerPool.start({ workers, parts: { module: new URL('./worker-parts.ts', import.meta.url).href, args: { port } } }) : undefined;
const startMs = performance.now() - t0;

async function step(n: number, onWorker?: (s: WorkerStats) => void) {
  const prompts = scalePrompts(Math.ceil(n / ROLLOUTS_PER_PROMPT));
  const options: StepOptions<unknown> = {
    prompts,
    env: env as StepOptions<unknown>['env'],
    policy,
    rng: createRng(1),
    rootPlan: new Map(prompts.map((p) => [p.id, ROLLOUTS_PER_PROMPT])),
    settings: { concurrency, maxTurns: MAX_TURNS, maxTokensPerTurn: 64, timeoutMs: 600_000, retry: { maxAttempts: 1 } },
  };
  const res = pool ? await runSplitStep(options, { workers: pool, ...(onWorker ? { onWorker } : {}) }) : await runStep(options);
  const failed = Object.values(res.failures).reduce((a, b) => a + (b ?? 0), 0);
  if (failed > 0) throw new Error(`${failed} trajectories failed: ${JSON.stringify(res.failures)}`);
  return res;
}

try {
  await step(Math.min(trajectories, 256));
  const stats: WorkerStats[] = [];
  const cpu0 = process.cpuUsage();
  const s0 = performance.now();
  const res = await step(trajectories, (s) => stats.push(s));
  const wallMs = performance.now() - s0;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    JSON.stringify({
      workers,
      trajectories,
      requests: res.spend.turns,
      wallMs,
      startMs,
      coordinatorCpuUs: cpu.user + cpu.system,
      coordinatorPeakRssMB: process.resourceUsage().maxRSS / 1024,
      workerStats: stats.sort((a, b) => a.worker - b.worker),
    }),
  );
} finally {
  await pool?.close();
}
process.exit(0);
