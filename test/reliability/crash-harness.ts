/**
 * kill -9 / resume cycles against the real `trace-rl train` command, shared by the crash test and
 * bench/reliability. Each cycle starts the run (fresh, or `--resume` when the folder holds a run),
 * waits a seeded random delay, and SIGKILLs the process wherever it is: loading, building the world,
 * in the middle of a step, writing a step, or between steps. After the last kill the run is resumed
 * to the end. `runContents` is what must equal an uninterrupted run's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_DB, RunStore } from '../../src/store/index.ts';
import { leaves } from '../../src/tree/index.ts';
import type { Rng } from '../../src/util/rng.ts';

export const BIN = new URL('../../bin/trace-rl.js', import.meta.url).pathname;

/** Everything a run stored except wall-clock timings, which differ between any two runs. */
export function runContents(dir: string) {
  const s = RunStore.open(dir, { readonly: true });
  try {
    const steps = s
      .steps()
      .map((x) => ({ step: x.step, metrics: Object.fromEntries(Object.entries(x.metrics).filter(([k]) => !k.startsWith('time_'))), details: x.details }));
    const trees = steps.map((x) => s.trees(x.step));
    return { steps, trees, checkpoints: s.checkpoints(s.lastStep()), status: s.status() };
  } finally {
    s.close();
  }
}

/** Steps stored so far, or -1 when the folder holds no complete run yet. */
export function storedSteps(dir: string): number {
  if (!existsSync(join(dir, RUN_DB))) return -1;
  try {
    const s = RunStore.open(dir, { readonly: true });
    try {
      return s.lastStep() + 1;
    } finally {
      s.close();
    }
  } catch {
    return -1;
  }
}

/**
 * The bookkeeping a resumed run must keep: steps 0..n−1 each stored exactly once, each step's ledger
 * count equal to the leaves of its stored trees, the cumulative count equal to the sum of the steps'.
 * Returns a list of violations (empty when sound).
 */
export function ledgerViolations(dir: string): string[] {
  const c = runContents(dir);
  const out: string[] = [];
  let cum = 0;
  c.steps.forEach((s, i) => {
    if (s.step !== i) out.push(`step ${i} is stored as ${s.step}`);
    const leafCount = c.trees[i]!.reduce((n, t) => n + leaves(t).length, 0);
    if (leafCount !== s.metrics.cost_trajectories)
      out.push(`step ${s.step}: ledger ${s.metrics.cost_trajectories} trajectories, stored trees have ${leafCount} leaves`);
    cum += s.metrics.cost_trajectories!;
    if (s.metrics.cum_trajectories !== cum) out.push(`step ${s.step}: cum_trajectories ${s.metrics.cum_trajectories}, sum of steps ${cum}`);
  });
  return out;
}

export interface KillCycleOptions {
  configFile: string;
  dir: string;
  /** SIGKILLs to deliver (fewer if the run finishes first). */
  kills: number;
  rng: Rng;
  /** Each kill lands uniformly in [minDelayMs, maxDelayMs] after the process starts. */
  minDelayMs: number;
  maxDelayMs: number;
}

export interface KillCycleReport {
  /** SIGKILLs delivered while the process was still running. */
  kills: number;
  /** Of those, kills after which the folder held a run that had not finished. */
  midRun: number;
  /** Kills that landed before the run folder was complete (the next start is a fresh start). */
  beforeCreate: number;
  /** Steps stored at each kill. */
  stepsAtKill: number[];
}

function start(o: KillCycleOptions) {
  const resume = storedSteps(o.dir) >= 0;
  const args = resume ? ['train', '--resume', o.dir, '--quiet'] : ['train', '--config', o.configFile, '--out', o.dir, '--quiet'];
  return spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Runs kill cycles, then resumes to the end; throws with the child's stderr if a start fails. */
export async function killResumeCycles(o: KillCycleOptions): Promise<KillCycleReport> {
  const report: KillCycleReport = { kills: 0, midRun: 0, beforeCreate: 0, stepsAtKill: [] };
  // maxDelayMs is one uninterrupted run's time, measured under whatever load the machine had then: a
  // run that finishes before the first kill lands (a less loaded moment) is started again from nothing
  // with the window halved, at most three times, so the test kills a run rather than none.
  let window = o.maxDelayMs - o.minDelayMs;
  for (let i = 0, retries = 0; i < o.kills; i++) {
    const child = start(o);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const delay = o.minDelayMs + o.rng.next() * window;
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), delay);
    const code = await exit;
    clearTimeout(timer);
    if (child.signalCode === 'SIGKILL') {
      report.kills++;
      const n = storedSteps(o.dir);
      report.stepsAtKill.push(n);
      if (n < 0) report.beforeCreate++;
      else if (runContents(o.dir).status !== 'finished') report.midRun++;
    } else if (code !== 0) {
      throw new Error(`trace-rl train exited with ${code} after ${report.kills} kills: ${stderr.trim()}`);
    } else if (report.kills === 0 && retries < 3) {
      retries++;
      i--;
      window /= 2;
      rmSync(o.dir, { recursive: true, force: true });
    } else {
      break; // finished before the kill
    }
  }
  const args = storedSteps(o.dir) >= 0 ? ['train', '--resume', o.dir, '--quiet'] : ['train', '--config', o.configFile, '--out', o.dir, '--quiet'];
  const last = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  if (last.status !== 0) throw new Error(`final resume failed (${last.status}): ${last.stderr.trim()}`);
  return report;
}
