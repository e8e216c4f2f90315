import type { Command } from 'commander';
import { createEstimator, ESTIMATOR_NAMES, ForestError, parseForestInput, UnknownEstimatorError, type AdvantageEstimator } from '../../advantage/index.ts';
import { readStdinRawJson, UsageError, writeJson } from '../io.ts';

/**
 * `trace-rl advantages --estimator grpo|tree-grpo|treepo|trace`: a forest on stdin
 * (`{"nodes":[{"id","parent","reward"?,"length"?}]}`), one advantage per leaf on stdout; `trace` adds
 * each leaf's per-turn values. Bad input is one stderr line naming the node and field, exit 2.
 */
export function register(program: Command): void {
  program
    .command('advantages')
    .description('compute tree-aware advantages for a forest of rollouts read from stdin')
    .requiredOption('--estimator <name>', `one of: ${ESTIMATOR_NAMES.join(', ')}`)
    .action(async (opts: { estimator: string }) => {
      const estimator = pickEstimator(opts.estimator);
      const raw = await readStdinRawJson();
      let forest;
      try {
        forest = parseForestInput(raw);
      } catch (e) {
        if (e instanceof ForestError) throw new UsageError(e.message);
        throw e;
      }
      const withTurns = estimator.name === 'trace';
      const leaves = estimator.estimate(forest).map((l) =>
        withTurns
          ? { id: l.id, advantage: l.advantage, turns: l.path.map((id, k) => ({ id, advantage: l.turns[k] })) }
          : { id: l.id, advantage: l.advantage },
      );
      writeJson({ leaves });
    });
}

function pickEstimator(name: string): AdvantageEstimator {
  try {
    return createEstimator(name);
  } catch (e) {
    if (e instanceof UnknownEstimatorError) throw new UsageError(`--estimator: ${e.message}`);
    throw e;
  }
}
