import type { Action, Prompt, Turn } from '../tree/types.ts';
import type { Environment, StepOutcome } from '../env/types.ts';
import { createRng } from '../util/rng.ts';
import { drawFault, emptyCounts } from './fault-plan.ts';

/** What a faulty tool can do to one call: throw an error, or never answer (until aborted). */
export const TOOL_FAULT_KINDS = ['throw', 'hang'] as const;
export type ToolFaultKind = (typeof TOOL_FAULT_KINDS)[number];

/** The error a faulty tool throws; the engine stores it on the node as a tool_error and retries. */
export class InjectedToolError extends Error {
  override name = 'InjectedToolError';
}

export interface ToolFaultOptions {
  /** Fraction of tool calls (environment steps of a tool action) that fail. */
  rate: number;
  kinds?: readonly ToolFaultKind[];
  seed?: number;
  /** How long a hanging call waits when nobody aborts it (default 10 minutes). */
  hangMs?: number;
}

export interface FaultyEnvironment<S> extends Environment<S> {
  readonly toolFaults: Readonly<Record<ToolFaultKind | 'ok', number>>;
}

/**
 * Wraps an environment so that a fraction of its tool calls throw or hang. Answers and invalid
 * actions are never faulted (they call no tool). `reset`, `restore` and `render` pass through, so
 * stored prefixes restore exactly as before. Call n's fate depends only on (seed, n).
 */
export function withToolFaults<S>(env: Environment<S>, options: ToolFaultOptions): FaultyEnvironment<S> {
  const kinds = options.kinds ?? TOOL_FAULT_KINDS;
  const rng = createRng(options.seed ?? 0);
  const hangMs = options.hangMs ?? 600_000;
  const counts = emptyCounts(kinds);
  let n = 0;
  const wrapped: FaultyEnvironment<S> = {
    name: `${env.name}+tool-faults`,
    maxTurns: env.maxTurns,
    toolFaults: counts as Record<ToolFaultKind | 'ok', number>,
    reset: (p: Prompt) => env.reset(p),
    restore: (p: Prompt, turns: readonly Turn[]) => env.restore(p, turns),
    render: (p: Prompt) => env.render(p),
    ...(env.parse ? { parse: (text: string) => env.parse!(text) } : {}),
    async step(state: S, action: Action, stepOptions?: { signal?: AbortSignal }): Promise<StepOutcome<S>> {
      if (action.type === 'answer' || action.type === 'invalid') return env.step(state, action, stepOptions);
      const id = n++;
      const fault = drawFault({ rate: options.rate, kinds }, rng.fork(`tool/${id}`));
      counts[fault]++;
      if (fault === 'throw') throw new InjectedToolError(`injected tool fault: ${action.type} call ${id} failed`);
      if (fault === 'hang') {
        await new Promise<void>((resolve, reject) => {
          const signal = stepOptions?.signal;
          const timer = setTimeout(resolve, hangMs);
          timer.unref();
          signal?.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              reject(signal.reason);
            },
            { once: true },
          );
        });
        throw new InjectedToolError(`injected tool fault: ${action.type} call ${id} hung for ${hangMs} ms`);
      }
      return env.step(state, action, stepOptions);
    },
  };
  return wrapped;
}
