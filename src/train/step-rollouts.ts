import { runStep, type StepOptions, type StepResult } from '../rollout/index.ts';
import { runSplitStep, StepWorkerPool } from '../rollout/split/index.ts';
import { ConfigError, workerEnv, type TrainConfig } from './config.ts';
import type { Components } from './components.ts';
import type { StepWeights, TrainStepPartsArgs } from './split-parts.ts';
import { loadedPlugins } from '../util/plugins.ts';

/** The module the workers build their parts from, run the way this one runs (TypeScript in a checkout, JavaScript in the build). */
const PARTS_MODULE = new URL(`./split-parts.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url).href;

/** How a run's steps roll out, and the workers to close when the run ends. */
export interface StepRollouts {
  run<S>(options: StepOptions<S>): Promise<StepResult>;
  /** Ends the run's worker processes (none in process); safe to call more than once. */
  close(): Promise<void>;
}

/**
 * How a training run's steps run their rollouts: in this process (engine.workers: 1), or split across
 * that many worker processes by prompt. The workers are started at the first step, each rebuilding the
 * run's parts, and serve every later step of the run with that step's weights (an update, not a
 * rebuild: environments that load data load it once); a failed or cancelled step ends them, and the
 * next step starts new ones.
 */
export function stepRollouts(config: TrainConfig, parts: Components): StepRollouts {
  const workers = config.engine.workers;
  if (workers <= 1) return { run: runStep, close: async () => {} };
  let pool: StepWorkerPool | undefined;
  return {
    async run(options) {
      const weights: StepWeights = { predictor: parts.predictor.save(), ...(parts.trainable ? { policy: parts.trainable.save() } : {}) };
      let current = pool;
      pool = undefined;
      try {
        if (current) await current.update(weights);
        else {
          const args: TrainStepPartsArgs = { ...workerConfig(config, parts), ...weights, ...(loadedPlugins().length > 0 ? { plugins: loadedPlugins() } : {}) };
          current = await StepWorkerPool.start({ workers, parts: { module: PARTS_MODULE, args } });
        }
        const result = await runSplitStep(options, { workers: current });
        // A cancelled step killed its workers; a finished one leaves them for the next step.
        if (!result.cancelled) pool = current;
        return result;
      } catch (e) {
        current?.kill();
        throw e;
      }
    },
    async close() {
      const open = pool;
      pool = undefined;
      await open?.close();
    },
  };
}

/**
 * What the workers build from: the run's configuration with the kind's share of the environment (a
 * server environment's sessions divided among them), and for such a kind the coordinator's prompts,
 * so that no worker asks the servers for every task's first observation again.
 */
function workerConfig(config: TrainConfig, parts: Components): Pick<TrainStepPartsArgs, 'config' | 'prompts'> {
  const shared = workerEnv(config);
  if (typeof shared === 'string') throw new ConfigError(`engine.workers: ${shared}`);
  return { config: { ...config, env: shared.env }, ...(shared.prompts ? { prompts: { train: parts.train, test: parts.test } } : {}) };
}
