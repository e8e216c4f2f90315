import { createEstimator, createTrace, type AdvantageEstimator } from '../../src/advantage/index.ts';
import { ROOT_RESAMPLE_TRACE, UNIFORM_ROOT_TRACE } from '../compare/experiments.ts';

/** An allocation arm of the gradient bench: a strategy (budget B is the bench's) and the estimators compared on its trees. */
export interface GradientArm {
  label: string;
  strategy: Record<string, unknown>;
  estimators: readonly string[];
}

/** Every estimator the bench knows, by label: the registered ones and the candidate forms of issue 33 §1. */
export const ESTIMATORS: Record<string, () => AdvantageEstimator> = {
  grpo: () => createEstimator('grpo'),
  'tree-grpo': () => createEstimator('tree-grpo'),
  treepo: () => createEstimator('treepo'),
  'trace-local': () => createEstimator('trace-local'),
  'trace:tree': () => createTrace({ promptTerm: 'tree' }),
  'trace:node': () => createTrace({ promptTerm: 'node' }),
  'trace:ancestors': () => createTrace({ promptTerm: 'ancestors' }),
};

const TREE_ESTIMATORS = Object.keys(ESTIMATORS);
/** The leaf weightings beside per-leaf (policy.sharedTurns): once needs per-node advantages (trace forms). */
const WEIGHTED = ['trace:tree@once', 'trace:tree@importance', 'tree-grpo@importance'];

/**
 * grpo's own trees (where every trace form is grpo), the sixth final's tree arm (frozen at d4d2ae1:
 * uniform roots, decision-weighted prefixes, root re-sampling, N = ½) and the recommendation at N = 2,
 * whose trees branch more, so the forms differ on more turns.
 */
export const GRADIENT_ARMS: readonly GradientArm[] = [
  { label: 'grpo', strategy: { name: 'grpo' }, estimators: ['grpo', 'tree-grpo'] },
  { label: 'trace-rs-half', strategy: ROOT_RESAMPLE_TRACE, estimators: TREE_ESTIMATORS },
  { label: 'trace-rec', strategy: UNIFORM_ROOT_TRACE, estimators: [...TREE_ESTIMATORS, ...WEIGHTED] },
  // The paper's prefix solver at N = 2 on uniform roots, with the flip rule and outcome-blind: does
  // branching where the outcome is uncertain, not where it can be flipped, point better?
  { label: 'trace-flip', strategy: { name: 'trace', roots: 'uniform' }, estimators: ['trace:tree', 'tree-grpo', ...WEIGHTED] },
  { label: 'trace-blind', strategy: { name: 'trace', roots: 'uniform', prefixValue: 'outcome-blind' }, estimators: ['trace:tree', 'tree-grpo', ...WEIGHTED] },
];
