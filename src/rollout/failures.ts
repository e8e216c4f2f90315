import type { RolloutTree, TurnError } from '../tree/types.ts';

/** Trajectories of a set of trees that ended in an error after the engine's retries, by cause. */
export interface FailureSummary {
  /** Trajectories that ended (every leaf with an end reason). */
  trajectories: number;
  /** Of those, the ones that ended with end = error. */
  failed: number;
  /** Failed trajectories per error code, e.g. { server_error: 3, timeout: 1 }. */
  byCode: Partial<Record<TurnError['code'], number>>;
  /** The first failure's `code: message`, in tree order, for a one-line report. */
  first?: string;
}

/** Counts the ended and the failed trajectories of `trees` (a failure's error is on its last turn). */
export function summariseFailures(trees: readonly RolloutTree[]): FailureSummary {
  const summary: FailureSummary = { trajectories: 0, failed: 0, byCode: {} };
  for (const tree of trees) {
    for (const id in tree.nodes) {
      const node = tree.nodes[id]!;
      if (node.end === undefined) continue;
      summary.trajectories++;
      if (node.end !== 'error') continue;
      summary.failed++;
      const code = node.turn?.error?.code ?? 'server_error';
      summary.byCode[code] = (summary.byCode[code] ?? 0) + 1;
      summary.first ??= node.turn?.error ? `${node.turn.error.code}: ${node.turn.error.message}` : 'no message recorded';
    }
  }
  return summary;
}

/** The causes in words: `server_error ×3, timeout ×1; first: server_error: HTTP 500: …`. */
export function failureCauses(s: FailureSummary): string {
  const counts = Object.entries(s.byCode)
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  return `${counts}; first: ${s.first ?? 'no message recorded'}`;
}
