/**
 * The folder of a resumable evaluation:
 *  - `eval.json`: what is being evaluated (environment, datasets, policy, sampling, seed). A folder is
 *    only ever continued with the same settings; different settings are refused with the field named.
 *  - `trajectories.jsonl`: one line per finished question, appended as it finishes (one write per
 *    line). A run killed mid-write leaves at most one partial last line, which is cut off on reopen.
 *    When a question appears twice (it was retried after an error), its last line counts.
 *  - `index.html`: the page (table + trajectories), rewritten at the end of every run.
 *  - `run.lock`: the PID of the one process writing the folder (train's lock): two evaluations
 *    appending to one trajectories file interleaved and duplicated their lines.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RunLock } from '../store/run-dir.ts';
import type { RolloutTree } from '../tree/types.ts';

export const EVAL_SPEC_FILE = 'eval.json';
export const TRAJECTORIES_FILE = 'trajectories.jsonl';
const FORMAT = 'trace-rl/eval@1';

export interface SampleRecord {
  answer?: string;
  reward?: number;
  end?: string;
  metrics: Record<string, number>;
  /** The turn error that ended the sample, when it failed after its retries. */
  error?: string;
}

export interface EvalRecord {
  dataset: string;
  id: string;
  question: string;
  answers: string[];
  samples: SampleRecord[];
  /** Mean of each metric over the samples. */
  metrics: Record<string, number>;
  /** Samples that ended in an error; such a question is run again when the evaluation is resumed. */
  errors: number;
  tree: RolloutTree;
}

/** Raised when a folder cannot be used for this evaluation. */
export class EvalError extends Error {
  override name = 'EvalError';
}

export class EvalStore {
  private constructor(
    /** The folder, or undefined for an evaluation kept in memory (training's periodic evaluation). */
    readonly dir: string | undefined,
    private readonly records: Map<string, EvalRecord>,
    private readonly lock?: RunLock,
  ) {}

  static inMemory(): EvalStore {
    return new EvalStore(undefined, new Map());
  }

  /** Opens `dir` for `spec`: creates it, or continues it when it holds the same evaluation. */
  static open(dir: string, spec: Record<string, unknown>): EvalStore {
    mkdirSync(dir, { recursive: true });
    // Taken before anything is read, so a second writer never sees (or cuts) a half-written line.
    const lock = RunLock.acquire(dir, 'evaluation', 'rerun the same command to continue');
    try {
      return EvalStore.openLocked(dir, spec, lock);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  private static openLocked(dir: string, spec: Record<string, unknown>, lock: RunLock): EvalStore {
    const specFile = path.join(dir, EVAL_SPEC_FILE);
    const wanted = { format: FORMAT, spec };
    if (existsSync(specFile)) {
      let held: { format?: string; spec?: Record<string, unknown> };
      try {
        held = JSON.parse(readFileSync(specFile, 'utf8')) as typeof held;
      } catch {
        throw new EvalError(`${specFile} is not an evaluation record; use another --out folder`);
      }
      const diff = firstDifference(held.spec ?? {}, spec);
      if (held.format !== FORMAT || diff !== undefined) {
        throw new EvalError(
          `${dir} holds an evaluation with other settings (${diff ?? 'format'} differs); use another --out folder, or the same settings to continue it`,
        );
      }
    } else {
      writeFileSync(specFile, JSON.stringify(wanted, null, 2) + '\n');
    }
    return new EvalStore(dir, readRecords(path.join(dir, TRAJECTORIES_FILE)), lock);
  }

  /** Releases the folder for the next evaluation (a killed process's lock is taken over instead). */
  close(): void {
    this.lock?.release();
  }

  /** Key of one question. */
  static key(dataset: string, id: string): string {
    return `${dataset}\u0000${id}`;
  }

  /** The finished record of a question, if it finished without errors. */
  done(dataset: string, id: string): EvalRecord | undefined {
    const r = this.records.get(EvalStore.key(dataset, id));
    return r && r.errors === 0 ? r : undefined;
  }

  get(dataset: string, id: string): EvalRecord | undefined {
    return this.records.get(EvalStore.key(dataset, id));
  }

  append(record: EvalRecord): void {
    if (this.dir !== undefined) appendFileSync(path.join(this.dir, TRAJECTORIES_FILE), JSON.stringify(record) + '\n');
    this.records.set(EvalStore.key(record.dataset, record.id), record);
  }
}

function readRecords(file: string): Map<string, EvalRecord> {
  const out = new Map<string, EvalRecord>();
  if (!existsSync(file)) return out;
  const text = readFileSync(file, 'utf8');
  let good = 0;
  let offset = 0;
  for (const line of text.split('\n')) {
    const end = offset + Buffer.byteLength(line) + 1;
    if (line.trim().length > 0) {
      let r: EvalRecord;
      try {
        r = JSON.parse(line) as EvalRecord;
      } catch {
        break; // a partial last line from a killed run: everything after it is dropped
      }
      out.set(EvalStore.key(r.dataset, r.id), r);
    }
    good = Math.min(end, Buffer.byteLength(text));
    offset = end;
  }
  if (good < Buffer.byteLength(text)) truncateSync(file, good);
  else if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n'); // a whole last line whose newline was not written
  return out;
}

/** The dotted path of the first field where two JSON values differ, or undefined when equal. */
function firstDifference(a: unknown, b: unknown, at = 'spec'): string | undefined {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return JSON.stringify(a) === JSON.stringify(b) ? undefined : at;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`);
    if (d !== undefined) return d;
  }
  return undefined;
}
