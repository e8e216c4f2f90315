import { basename, resolve } from 'node:path';
import { readSetupRefusals, SETUP_REFUSALS_NOTE, type SetupRefusals } from '../record/setup-refusals.ts';
import { RunStore, RunStoreError } from '../store/index.ts';
import type { RolloutTree } from '../tree/types.ts';
import { ReportError } from './errors.ts';

/** One step as the report reads it: metrics (with `cum_*` filled in when only `cost_*` was logged) and details. */
export interface ReportStep {
  step: number;
  metrics: Record<string, number>;
  details: Record<string, unknown>;
}

/** Everything the report needs from one run folder, read once and then closed. */
export interface RunData {
  dir: string;
  /**
   * The run's arm: `config.arm`, else `config.strategy.name`, else the folder name (then `notes` says
   * so). Runs with the same arm are seeds of one curve.
   */
  strategy: string;
  seed: number | null;
  status: string;
  steps: ReportStep[];
  notes: string[];
}

const CUMULATIVE: ReadonlyArray<[cum: string, cost: string]> = [
  ['cum_trajectories', 'cost_trajectories'],
  ['cum_turns', 'cost_turns'],
  ['cum_tokens', 'cost_tokens'],
];

/** Reads a run folder; a folder that is not a run becomes a ReportError naming the folder and the fix. */
export function loadRun(dir: string): RunData {
  const store = openRun(dir);
  try {
    const notes: string[] = [];
    const config = store.config();
    const strategy = stringAt(config, ['arm']) ?? stringAt(config, ['strategy', 'name']);
    if (strategy === undefined) notes.push(`${dir}: config has no strategy.name; the run is labelled by its folder name`);
    const refused = readSetupRefusals(store.note(SETUP_REFUSALS_NOTE));
    if (refused) notes.push(setupRefusalsNote(dir, refused));
    const seedValue = numberAt(config, ['seed']);
    const steps = fillCumulative(store.steps());
    return {
      dir: resolve(dir),
      strategy: strategy ?? basename(resolve(dir)),
      seed: seedValue ?? null,
      status: store.status(),
      steps,
      notes,
    };
  } finally {
    store.close();
  }
}

/** The tasks a run skipped at setup, in words (the report's notes). */
function setupRefusalsNote(dir: string, r: SetupRefusals): string {
  const parts: string[] = [];
  if (r.server > 0) parts.push(`${r.server} refused by the server`);
  if (r.context > 0) {
    const named = r.named.map((t) => `"${t.id}" ${t.tokens} tokens`).join(', ');
    parts.push(
      `${r.context} whose first observation does not fit the policy's context of ${r.named[0]?.context ?? '?'} tokens (${named}${r.context > r.named.length ? ', …' : ''})`,
    );
  }
  return `${dir}: ${r.server + r.context} of ${r.tasks} tasks skipped at setup: ${parts.join('; ')}`;
}

/** The stored trees of some steps of a run (trees are the bulk of a run; read only those shown). */
export function loadTrees(dir: string, steps: number[]): Map<number, RolloutTree[]> {
  const store = openRun(dir);
  try {
    return new Map(steps.map((s) => [s, store.trees(s)]));
  } finally {
    store.close();
  }
}

function openRun(dir: string): RunStore {
  try {
    return RunStore.open(dir, { readonly: true });
  } catch (e) {
    if (e instanceof RunStoreError) throw new ReportError(`${dir}: not a trace-rl run folder (${e.message})`);
    // better-sqlite3 raises SqliteError (code SQLITE_*) for a file that is not a readable database.
    if (e instanceof Error && String((e as { code?: unknown }).code ?? '').startsWith('SQLITE')) {
      throw new ReportError(`${dir}: its run.sqlite cannot be read (${e.message}); pass a folder made by trace-rl train`);
    }
    throw e;
  }
}

/** Running totals since step 0, so that "against cost" works even when a run logged only per-step cost. */
function fillCumulative(steps: ReportStep[]): ReportStep[] {
  const totals = new Map<string, number>();
  return steps.map((s) => {
    const metrics = { ...s.metrics };
    for (const [cum, cost] of CUMULATIVE) {
      const c = metrics[cost];
      if (typeof c === 'number') totals.set(cum, (totals.get(cum) ?? 0) + c);
      if (typeof metrics[cum] !== 'number' && totals.has(cum)) metrics[cum] = totals.get(cum)!;
    }
    return { ...s, metrics };
  });
}

function valueAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function stringAt(value: unknown, path: string[]): string | undefined {
  const v = valueAt(value, path);
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function numberAt(value: unknown, path: string[]): number | undefined {
  const v = valueAt(value, path);
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
