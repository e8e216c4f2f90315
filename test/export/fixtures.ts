import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RunStore } from '../../src/store/index.ts';
import { buildComponents, parseTrainConfig, train, type TrainConfig } from '../../src/train/index.ts';
import type { RolloutTree } from '../../src/tree/index.ts';
import type { Environment } from '../../src/env/index.ts';
import type { Prompt } from '../../src/tree/types.ts';

/** A real one-step TRACE run on the embedded world (small: 8 prompts, 24 trajectories). */
export const SMALL_RUN = { steps: 1, pool: 8, strategy: { name: 'trace', budget: 24 }, env: { questions: 300 }, eval: { every: 10, questions: 5 } };

export interface RunFixture {
  dir: string;
  config: TrainConfig;
  trees: RolloutTree[];
  env: Environment<unknown>;
  prompts: Map<string, Prompt>;
  /** The prompt text as the run's environment renders it (what the store must hold). */
  render: (tree: RolloutTree) => string;
}

let cached: Promise<RunFixture> | undefined;

/** Made once per test file process; every test reads the same stored trees. */
export function smallRun(): Promise<RunFixture> {
  cached ??= (async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'trace-export-')), 'run');
    await train({ out: dir, config: SMALL_RUN, clock: () => performance.now() });
    const store = RunStore.open(dir, { readonly: true });
    const config = parseTrainConfig(store.config(), { stored: true });
    const trees = store.trees(0);
    store.close();
    const parts = await buildComponents(config);
    const prompts = new Map([...parts.train, ...parts.test].map((p) => [p.id, p]));
    return { dir, config, trees, env: parts.env, prompts, render: (t: RolloutTree) => parts.env.render(prompts.get(t.promptId)!) };
  })();
  return cached;
}
