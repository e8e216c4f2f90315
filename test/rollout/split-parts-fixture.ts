/**
 * The worker side of test/rollout/split-step.test.ts: the real simulator and its policy, built from a
 * seed as the test builds them in process, and the same strategy's prefix planner. `crashOn` and
 * `hangOn` make the worker's policy exit the process or never answer at a prompt's first call.
 */
import { createStrategy } from '../../src/allocate/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { StepParts } from '../../src/rollout/split/index.ts';

export interface FixtureArgs {
  seed: number;
  /** trace's options (the test's strategy). */
  strategy?: Record<string, unknown>;
  crashOn?: string;
  hangOn?: string;
}

export function buildStepParts(args: unknown): StepParts {
  const a = args as FixtureArgs;
  const env = new Simulator({ seed: a.seed });
  const inner = new SimulatorPolicy(env);
  const policy: Policy = {
    name: inner.name,
    act(ctx) {
      if (ctx.prompt.id === a.crashOn) process.exit(3);
      if (ctx.prompt.id === a.hangOn) return new Promise(() => undefined);
      return inner.act(ctx);
    },
  };
  const prefixes = a.strategy ? createStrategy('trace', a.strategy as never).prefixes : undefined;
  return { env: env as StepParts['env'], policy, ...(prefixes ? { prefixes } : {}) };
}
