import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileVersionRecord, scalarsRecord } from './tfevents.ts';

/**
 * The run's metrics as a stream a person can tail, plot or point a tracker at, written beside the
 * store as each step is stored: `metrics.jsonl`, one object per step (`{"step": N, "<key>": value, …}`,
 * the keys of src/record/metrics.ts), and `metrics.csv` in long form (`step,metric,value`: one row per
 * step and key, so a key that appears later, such as an evaluation every k steps, needs no new header).
 * And a TensorBoard event file (src/store/tfevents.ts), so `tensorboard --logdir runs/` shows every
 * run as its folder's name. Each line (record) is appended with one write as soon as its step is
 * committed. The store stays the record: a resumed run rewrites all three from it first, so a crash
 * between the writes loses nothing (steps rewritten that way have wall time 0 in TensorBoard: the
 * store keeps no clock time).
 */
export const METRICS_JSONL = 'metrics.jsonl';
export const METRICS_CSV = 'metrics.csv';
/** TensorBoard reads any file whose name contains "tfevents". */
export const METRICS_TFEVENTS = 'events.out.tfevents.trace-rl';
const CSV_HEADER = 'step,metric,value\n';

export class MetricsLog {
  private started = false;

  constructor(private readonly dir: string) {}

  /** Rewrites both files from the stored steps (a resumed run), before any new step is appended. */
  reset(steps: ReadonlyArray<{ step: number; metrics: Record<string, number> }>, wallMs = 0): void {
    this.write(METRICS_JSONL, writeFileSync, steps.map((s) => jsonLine(s.step, s.metrics)).join(''));
    this.write(METRICS_CSV, writeFileSync, CSV_HEADER + steps.map((s) => csvRows(s.step, s.metrics)).join(''));
    this.write(METRICS_TFEVENTS, writeFileSync, Buffer.concat([fileVersionRecord(wallMs / 1000), ...steps.map((s) => scalarsRecord(s.step, 0, s.metrics))]));
    this.started = true;
  }

  /** Appends one stored step to every file (a new run creates them at its first step); `wallMs`: milliseconds since the epoch, for TensorBoard. */
  append(step: number, metrics: Record<string, number>, wallMs = 0): void {
    if (!this.started) this.reset([], wallMs);
    this.write(METRICS_JSONL, appendFileSync, jsonLine(step, metrics));
    this.write(METRICS_CSV, appendFileSync, csvRows(step, metrics));
    this.write(METRICS_TFEVENTS, appendFileSync, scalarsRecord(step, wallMs / 1000, metrics));
  }

  /** One write; a failed write(2) (a full disk) carries no path, so the file is named on the error. */
  private write(name: string, how: typeof appendFileSync, data: string | Uint8Array): void {
    const file = join(this.dir, name);
    try {
      how(file, data);
    } catch (e) {
      (e as NodeJS.ErrnoException).path ??= file;
      throw e;
    }
  }
}

function jsonLine(step: number, metrics: Record<string, number>): string {
  return JSON.stringify({ step, ...metrics }) + '\n';
}

/** RFC 4180 quoting, for a key such as `eval_em/<dataset>` whose dataset name holds a comma or a quote. */
const csvField = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function csvRows(step: number, metrics: Record<string, number>): string {
  return Object.entries(metrics)
    .map(([key, value]) => `${step},${csvField(key)},${typeof value === 'number' && Number.isFinite(value) ? String(value) : ''}\n`)
    .join('');
}
