import type { Command } from 'commander';
import {
  ADVANTAGE_SCALES,
  createEstimator,
  estimatorNames,
  ForestError,
  isPerNodeEstimator,
  parseForestInput,
  UnknownEstimatorError,
  type AdvantageEstimator,
  type AdvantageScale,
} from '../../advantage/index.ts';
import { readStdinRawJson, UsageError, writeJson } from '../io.ts';

/**
 * `trace-rl advantages --estimator grpo|tree-grpo|treepo|trace|trace-local [--scale std|none]`: a forest on stdin
 * (`{"nodes":[{"id","parent","reward"?,"length"?}]}`), one advantage per leaf on stdout; `trace` and
 * `trace-local` add each leaf's per-turn values. Bad input is one stderr line naming the node and field, exit 2.
 */
export function register(program: Command): void {
  program
    .command('advantages')
    .description('compute tree-aware advantages for a forest of rollouts read from stdin')
    .requiredOption('--estimator <name>', `one of: ${estimatorNames().join(', ')}`)
    .option('--scale <scale>', 'std (divide by the group std, GRPO) or none (unscaled deviations, Dr. GRPO; not treepo)', 'std')
    .action(async (opts: { estimator: string; scale: string }) => {
      const estimator = pickEstimator(opts.estimator, opts.scale);
      const raw = await readStdinRawJson();
      let forest;
      try {
        forest = parseForestInput(raw);
      } catch (e) {
        if (e instanceof ForestError) throw new UsageError(e.message);
        throw e;
      }
      const withTurns = isPerNodeEstimator(estimator.name);
      const leaves = estimator
        .estimate(forest)
        .map((l) =>
          withTurns
            ? { id: l.id, advantage: l.advantage, turns: l.path.map((id, k) => ({ id, advantage: l.turns[k] })) }
            : { id: l.id, advantage: l.advantage },
        );
      writeJson({ leaves });
    });
}

function pickEstimator(name: string, scale: string): AdvantageEstimator {
  if (!(ADVANTAGE_SCALES as readonly string[]).includes(scale)) throw new UsageError(`--scale: "${scale}" is not one of ${ADVANTAGE_SCALES.join(', ')}`);
  try {
    return createEstimator(name, { scale: scale as AdvantageScale });
  } catch (e) {
    if (e instanceof UnknownEstimatorError) throw new UsageError(`--estimator: ${e.message}`);
    if (e instanceof RangeError) throw new UsageError(`--scale: ${e.message}`);
    throw e;
  }
}
