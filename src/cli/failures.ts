/**
 * How a command that talks to a policy server reports work that failed after the engine's retries:
 * one stderr line saying how many of how many failed, the first cause and what became of them; when
 * every one failed, exit code 1 and a pointer to the server, since an unreachable server or a wrong
 * --base-url or --model would otherwise read as a policy that scores 0 (eval) or as an empty batch
 * (rollout). `trace-rl eval` and `trace-rl rollout` both report this way.
 */
import { escapeControl } from '../util/escape-control.ts';

export interface FailureReport {
  /** `trace-rl eval`, `trace-rl rollout`. */
  command: string;
  failed: number;
  total: number;
  /** What was counted: `questions`, `trajectories of step 3`. */
  unit: string;
  /** The first failure's cause, or the causes by code. */
  causes: string;
  /** What became of the failed work: `they score 0 above and run again when …`. */
  kept: string;
  /** When all failed: the clause that says so and what to check, e.g. `every question failed: check the server (--base-url, --model) before reading the table`. */
  whenAll: string;
}

/** The report's line (without a newline). */
export function failureLine(r: FailureReport): string {
  const all = r.failed === r.total;
  // The causes quote servers' own text: escaped, so it cannot drive the terminal.
  return `${r.command}: ${r.failed} of ${r.total} ${r.unit} ended in an error after the engine's retries (${escapeControl(r.causes)}); ${r.kept}${all ? `; ${r.whenAll}` : ''}`;
}

/** Writes the line on stderr; sets exit code 1 when every one failed. Nothing when none failed. */
export function reportFailures(r: FailureReport): void {
  if (r.failed === 0) return;
  process.stderr.write(failureLine(r) + '\n');
  if (r.failed === r.total) process.exitCode = 1;
}
