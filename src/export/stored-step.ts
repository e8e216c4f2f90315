import { createEstimator, importanceWeighted, isEstimatorName, type AdvantageEstimator, type EstimatorName } from '../advantage/index.ts';
import type { TreeRecord } from '../record/index.ts';
import type { RolloutTree } from '../tree/index.ts';
import { ExportError } from './rows.ts';

/**
 * What an export needs of a stored step besides its trees, read from the step's tree records: the
 * prompt text each tree's policy saw, and the advantages the run used. Nothing is rebuilt: no
 * environment, model or training configuration is needed to export.
 */
export interface StoredText {
  render: (tree: RolloutTree) => string;
  estimator: AdvantageEstimator;
}

/**
 * `records` must hold one record per tree (steps stored before tree records existed hold none: such a
 * run is refused with what to do). `estimator`: recompute the advantages with another estimator (at
 * the run's advantage scale) instead of the stored ones.
 */
export function storedText(trees: readonly RolloutTree[], records: readonly TreeRecord[], where: string, estimator?: EstimatorName): StoredText {
  const byId = new Map(records.map((r) => [r.promptId, r]));
  const missing = trees.find((t) => !byId.has(t.promptId));
  if (missing)
    throw new ExportError(
      `${where} holds no rendered prompt for tree "${missing.promptId}": the run predates stored prompts (trace-rl before tree records), so its prompt text cannot be exported without rebuilding its environment; run it again with this trace-rl (same config, same seed) and export that run`,
    );
  const render = (tree: RolloutTree) => byId.get(tree.promptId)!.rendered;
  const stored = trees.map((t) => byId.get(t.promptId)!.advantages);
  const name = stored[0]?.estimator ?? estimator ?? 'trace';
  if (!isEstimatorName(name)) throw new ExportError(`${where} stores advantages of an unknown estimator "${name}"`);
  if (estimator !== undefined && estimator !== name) {
    // Recomputed advantages get the importance weights the learner applied to the stored ones.
    const other = createEstimator(estimator, { scale: stored[0]?.scale });
    return { render, estimator: { name: other.name, estimate: (forest) => importanceWeighted(other.estimate(forest), trees) } };
  }
  return { render, estimator: { name, estimate: () => stored.flatMap((s) => s.leaves) } };
}
