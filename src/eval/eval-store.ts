/**
 * The folder of a resumable evaluation:
 *  - `eval.json`: what is being evaluated (environment, datasets, policy, sampling, seed). A folder is
 *    only ever continued with the same settings; different settings are refused with the field named.
 *  - `trajectories.jsonl`: one line per finished question, appended as it finishes (one write per
 *    line). A run killed mid-write leaves at most one partial last line, which is cut off on reopen.
 *    A question retried after an error is appended again (a crash loses nothing), and the file is
 *    rewritten with one line per question, its last, when the evaluation closes (or, after a kill,
 *    when it is reopened): a rerun does not leave duplicate lines.
 *  - `index.html`: the page (table + trajectories), rewritten at the end of every run.
 *  - `run.lock`: the PID of the one process writing the folder (train's lock): two evaluations
 *    appending to one trajectories file interleaved and duplicated their lines.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../store/atomic-write.ts';
import { RunLock } from '../store/run-dir.ts';
import type { RolloutTree } from '../tree/types.ts';

export const EVAL_SPEC_FILE = 'eval.json';
export const TRAJECTORIES_FILE = 'trajectories.jsonl';
export const EVAL_PAGE_FILE = 'index.html';
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
    /** Whether the file holds some question on more than one line (compacted on close). */
    private duplicated = false,
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
      // A new evaluation writes its files into the folder; files of those names that are already
      // there were not written by one (eval.json comes first), and would be cut or replaced.
      const foreign = [TRAJECTORIES_FILE, EVAL_PAGE_FILE].filter((f) => existsSync(path.join(dir, f)));
      if (foreign.length > 0)
        throw new EvalError(
          `${dir} holds ${foreign.join(' and ')} but no ${EVAL_SPEC_FILE}: not an evaluation folder, and its files would be replaced; use another --out folder`,
        );
      writeFileSync(specFile, JSON.stringify(wanted, null, 2) + '\n');
    }
    const { records, lines } = readRecords(path.join(dir, TRAJECTORIES_FILE));
    const store = new EvalStore(dir, records, lock, lines > records.size);
    store.compact(); // a killed rerun's duplicates
    return store;
  }

  /** Writes one line per question (its last) when the file holds more; atomically, so a kill keeps one or the other. */
  private compact(): void {
    if (this.dir === undefined || !this.duplicated) return;
    writeFileAtomic(path.join(this.dir, TRAJECTORIES_FILE), [...this.records.values()].map((r) => JSON.stringify(r) + '\n').join(''));
    this.duplicated = false;
  }

  /** Leaves one line per question in the file and releases the folder for the next evaluation (a killed process's lock is taken over instead). */
  close(): void {
    try {
      this.compact();
    } finally {
      this.lock?.release();
    }
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
    const key = EvalStore.key(record.dataset, record.id);
    if (this.dir !== undefined) {
      const file = path.join(this.dir, TRAJECTORIES_FILE);
      try {
        appendFileSync(file, JSON.stringify(record) + '\n');
      } catch (e) {
        // write(2) errors (a full disk) carry no path; the one-line error should name the file.
        (e as NodeJS.ErrnoException).path ??= file;
        throw e;
      }
      if (this.records.has(key)) this.duplicated = true;
    }
    // Deleted first so the question moves to where its line now is: the compacted file keeps the append order.
    this.records.delete(key);
    this.records.set(key, record);
  }
}

/** The last record of each question, and how many lines held records. */
function readRecords(file: string): { records: Map<string, EvalRecord>; lines: number } {
  const out = new Map<string, EvalRecord>();
  let lines = 0;
  if (!existsSync(file)) return { records: out, lines };
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
      const key = EvalStore.key(r.dataset, r.id);
      out.delete(key);
      out.set(key, r);
      lines++;
    }
    good = Math.min(end, Buffer.byteLength(text));
    offset = end;
  }
  if (good < Buffer.byteLength(text)) truncateSync(file, good);
  else if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n'); // a whole last line whose newline was not written
  return { records: out, lines };
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
