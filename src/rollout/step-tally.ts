import { getNode, type RolloutTree } from '../tree/index.ts';
import { addProgress, emptyProgress, type Progress } from './events.ts';
import type { StepResult } from './step-options.ts';
import type { TrajectoryResult } from './trajectory.ts';

/**
 * What a step counts while its trajectories run: the progress every event carries, failures by error
 * code, and continuations skipped because their prefix replayed differently, by prompt. The step's
 * result hands these objects out as they are.
 */
export class StepTally {
  readonly progress: Progress = emptyProgress();
  readonly failures: StepResult['failures'] = {};
  readonly replayMismatches: StepResult['replayMismatches'] = { byPrompt: {} };

  /** The counts so far as an event carries them: a copy, since a listener may keep it while they change. */
  snapshot(): Progress {
    return { ...this.progress };
  }

  /** A trajectory of `tree` ended (any end, or never started). */
  ended(tree: RolloutTree, origin: 'bare' | 'continuation', r: TrajectoryResult): void {
    if (origin === 'bare') this.progress.bareDone++;
    else this.progress.continuationDone++;
    if (r.replayMismatch) {
      const by = this.replayMismatches.byPrompt;
      by[tree.promptId] = (by[tree.promptId] ?? 0) + 1;
      this.replayMismatches.first ??= r.replayMismatch.message;
    } else if (r.end === 'error') {
      this.progress.failed++;
      const code = r.leafId ? getNode(tree, r.leafId).turn?.error?.code : undefined;
      if (code) this.failures[code] = (this.failures[code] ?? 0) + 1;
    }
  }

  /** Adds the counts of parts that ran elsewhere (a remote round) to this step's. */
  absorb(parts: Pick<StepResult, 'progress' | 'failures'>): void {
    addProgress(this.progress, parts.progress);
    for (const [code, n] of Object.entries(parts.failures))
      this.failures[code as keyof typeof this.failures] = (this.failures[code as keyof typeof this.failures] ?? 0) + n!;
  }
}
