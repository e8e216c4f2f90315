/**
 * A worker process of a split step (worker-pool.ts starts it): builds its parts once from the module
 * the coordinator names, then runs each task it is sent — its prompts' bare rollouts and prefix
 * expansion, through the same engine as in process — and answers with the finished trees. Reads
 * messages on stdin and answers on fd 3; when stdin closes (the coordinator is done or gone) it exits.
 */
import { createWriteStream } from 'node:fs';
import { DEFAULT_SCHEDULE, type Strategy } from '../../allocate/types.ts';
import { createRng } from '../../util/rng.ts';
import { runStep } from '../engine.ts';
import { readFrames, writeFrame } from './frames.ts';
import {
  PROGRESS_EVERY_MS,
  RESULT_FD,
  type BuildStepParts,
  type CoordinatorMessage,
  type StepParts,
  type TaskMessage,
  type WorkerMessage,
} from './protocol.ts';

const maxBytes = Number(process.env.TRACE_RL_WORKER_MAX_BYTES);
const out = createWriteStream('', { fd: RESULT_FD });
let parts: StepParts | undefined;
let queue = Promise.resolve();

const send = (m: WorkerMessage) => writeFrame(out, m, maxBytes);

/** Answers a failure and ends the process: a worker in an unknown state takes no further task. */
async function failAndExit(e: unknown): Promise<never> {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  try {
    await send({ kind: 'failed', message });
  } catch {
    process.stderr.write(`${message}\n`);
  }
  process.exit(1);
}

async function handle(m: CoordinatorMessage): Promise<void> {
  if (m.kind === 'build') {
    const mod = (await import(m.parts.module)) as { buildStepParts?: BuildStepParts };
    if (typeof mod.buildStepParts !== 'function') throw new Error(`${m.parts.module} exports no function buildStepParts`);
    parts = await mod.buildStepParts(m.parts.args);
    return send({ kind: 'ready' });
  }
  if (!parts) throw new Error(`a${m.kind === 'update' ? 'n update' : ' task'} came before the parts were built`);
  if (m.kind === 'update') {
    if (!parts.update) throw new Error('these parts cannot take an update (StepParts.update)');
    await parts.update(m.args);
    return send({ kind: 'ready' });
  }
  return send(await runTask(parts, m));
}

/** The task's share of the step, as the in-process engine would run it: the coordinator's plan, no leftover (the coordinator runs it). */
async function runTask(parts: StepParts, task: TaskMessage): Promise<WorkerMessage> {
  const plan = new Map(task.plan);
  const budgets = new Map(task.expansion?.budgets ?? []);
  if (task.expansion) agreeOnExpansion(parts, task, plan, budgets);
  let cap = 0;
  for (const [id, m] of plan) cap += m + (budgets.get(id) ?? 0);
  const weights = task.weights ? new Map(task.weights) : undefined;
  const strategy: Omit<Strategy, 'name'> = {
    cap: task.priced ? task.priced.cap : cap,
    unit: task.priced ? task.priced.unit : 'trajectories',
    roots: { plan: () => new Map(plan), ...(weights ? { weights: () => weights } : {}) },
    ...(task.expansion && parts.prefixes ? { prefixes: parts.prefixes } : {}),
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let said = -Infinity;
  const res = await runStep({
    prompts: task.prompts,
    env: parts.env,
    policy: parts.policy,
    rng: createRng(task.seed),
    strategy,
    candidates: task.candidates,
    settings: task.settings,
    ...(task.priced ? { rootCost: task.priced.root } : {}),
    ...(parts.scorer ? { scorer: parts.scorer } : {}),
    ...(parts.parseAction ? { parseAction: parts.parseAction } : {}),
    ...(task.greedy ? { greedy: true } : {}),
    onEvent(e) {
      const now = performance.now();
      if (now - said < PROGRESS_EVERY_MS) return;
      said = now;
      send({ kind: 'progress', progress: e.progress }).catch(() => undefined); // a broken pipe fails the result's send, which reports it
    },
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // Read (and reset) once per task: the worker's sessions are its own, so its load is counted only here.
  const serverLoad = parts.env.serverLoad?.();
  return {
    kind: 'result',
    trees: res.trees,
    spend: res.spend,
    progress: res.progress,
    failures: res.failures,
    replayMismatches: res.replayMismatches,
    replayCost: res.replayCost,
    ...(serverLoad ? { serverLoad } : {}),
    cpuUs: cpu.user + cpu.system,
    wallMs,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

/** The worker's prefix planner must answer what the coordinator's does, or the trees would differ from the step's. */
function agreeOnExpansion(parts: StepParts, task: TaskMessage, plan: ReadonlyMap<string, number>, budgets: ReadonlyMap<string, number>): void {
  const planner = parts.prefixes;
  if (!planner) throw new Error("the coordinator's strategy expands prefixes but this worker's parts have no prefix planner (StepParts.prefixes)");
  const mine = JSON.stringify(planner.schedule ?? DEFAULT_SCHEDULE);
  if (mine !== JSON.stringify(task.expansion!.schedule))
    throw new Error(`this worker's prefix schedule ${mine} is not the coordinator's ${JSON.stringify(task.expansion!.schedule)}`);
  for (const [id, m] of plan) {
    const b = planner.continuationBudget(m);
    if (b !== budgets.get(id)) throw new Error(`this worker's continuation budget for m = ${m} is ${b}, the coordinator's ${budgets.get(id)} (prompt "${id}")`);
  }
}

readFrames(
  process.stdin,
  maxBytes,
  (m) => {
    queue = queue.then(() => handle(m as CoordinatorMessage)).catch(failAndExit);
  },
  (e) => void failAndExit(e),
);
process.stdin.on('end', () => void queue.then(() => process.exit(0)));
