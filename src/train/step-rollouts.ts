import { runStep, type StepOptions, type StepResult } from '../rollout/index.ts';
import { runSplitStep } from '../rollout/split/index.ts';
import type { TrainConfig } from './config.ts';
import type { Components } from './components.ts';
import type { TrainStepPartsArgs } from './split-parts.ts';
import { loadedPlugins } from '../util/plugins.ts';

/** The module the workers build their parts from, run the way this one runs (TypeScript in a checkout, JavaScript in the build). */
const PARTS_MODULE = new URL(`./split-parts.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url).href;

/**
 * How a training step runs its rollouts: in this process (engine.workers: 1), or split across that
 * many worker processes by prompt, each rebuilding the run's parts with this step's weights.
 */
export function stepRollouts(config: TrainConfig, parts: Components): <S>(options: StepOptions<S>) => Promise<StepResult> {
  const workers = config.engine.workers;
  if (workers <= 1) return runStep;
  return (options) => {
    const args: TrainStepPartsArgs = {
      config,
      predictor: parts.predictor.save(),
      ...(loadedPlugins().length > 0 ? { plugins: loadedPlugins() } : {}),
      ...(parts.trainable ? { policy: parts.trainable.save() } : {}),
    };
    return runSplitStep(options, { workers, parts: { module: PARTS_MODULE, args } });
  };
}
