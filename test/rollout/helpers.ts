/**
 * Test helpers for the engine: wrappers around the real simulator policy and environment that add
 * delays, count calls and inject failures. They wrap real components; they do not replace them.
 */
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import type { Environment, StepOutcome } from '../../src/env/types.ts';
import { PolicyCallError } from '../../src/policy/errors.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../../src/policy/types.ts';
import type { Action, RolloutTree, Turn } from '../../src/tree/index.ts';
import type { Allocator } from '../../src/rollout/index.ts';
import type { Prompt } from '../../src/tree/types.ts';

export function sim(seed = 7): { env: Simulator; policy: SimulatorPolicy; prompts: Prompt[] } {
  const env = new Simulator({ seed });
  return { env, policy: new SimulatorPolicy(env), prompts: env.prompts(4) };
}

const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Hash of a string to [0, 1): a delay that depends on the call but not on scheduling. */
function unit(s: string, salt: number): number {
  let h = 2166136261 ^ salt;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

/** Counts calls and the peak number in flight; optional per-call delay and failure injection. */
export class InstrumentedPolicy implements Policy {
  readonly name = 'instrumented';
  calls = 0;
  inFlight = 0;
  peak = 0;
  tokens = 0;
  readonly log: string[] = [];
  constructor(
    readonly inner: Policy,
    readonly opts: {
      delayMs?: (ctx: PolicyContext) => number;
      /** Return an error to throw instead of answering (checked before the delay). */
      fail?: (ctx: PolicyContext) => Error | 'hang' | undefined;
    } = {},
  ) {}

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    this.calls++;
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    this.log.push(ctx.callId ?? '?');
    try {
      const f = this.opts.fail?.(ctx);
      if (f === 'hang') await new Promise(() => {}); // ignores its signal on purpose
      if (f) throw f;
      const d = this.opts.delayMs?.(ctx) ?? 0;
      if (d > 0) await wait(d, ctx.signal);
      const out = await this.inner.act(ctx);
      this.tokens += out.generatedTokens;
      return out;
    } finally {
      this.inFlight--;
    }
  }
}

/** A delay in [0, maxMs) that depends on the call id and a salt: different salts reorder completions. */
export function scrambledDelay(maxMs: number, salt: number) {
  return (ctx: PolicyContext) => Math.floor(unit(ctx.callId ?? '', salt) * maxMs);
}

/** Wraps an environment: counts restores (with their turns) and steps, injects tool failures. */
export class SpyEnv<S> implements Environment<S> {
  readonly name: string;
  steps = 0;
  readonly restores: Array<{ promptId: string; turns: Turn[] }> = [];
  constructor(
    readonly inner: Environment<S>,
    readonly failStep?: (action: Action, n: number) => boolean,
  ) {
    this.name = inner.name;
  }
  reset(prompt: Prompt): S | Promise<S> {
    return this.inner.reset(prompt);
  }
  async step(state: S, action: Action, options?: { signal?: AbortSignal }): Promise<StepOutcome<S>> {
    this.steps++;
    if (this.failStep?.(action, this.steps)) throw new Error('retriever unavailable (injected)');
    return this.inner.step(state, action, options);
  }
  restore(prompt: Prompt, turns: readonly Turn[]): S | Promise<S> {
    this.restores.push({ promptId: prompt.id, turns: [...turns] });
    return this.inner.restore(prompt, turns);
  }
  render(prompt: Prompt): string {
    return this.inner.render(prompt);
  }
}

/** Exposes KnowsTruth through the spy when the inner env has it. */
export class SpyTruthEnv<S> extends SpyEnv<S> {
  trueSuccess(prompt: Prompt, turns: readonly Turn[]): number {
    return (this.inner as unknown as { trueSuccess(p: Prompt, t: readonly Turn[]): number }).trueSuccess(prompt, turns);
  }
}

/** An allocator with fixed roots and "expand the first `perPrompt` prefixes with K each". */
export function fixedAllocator(m: number, perPrompt: number, K: number, seen?: Array<{ promptId: string; ids: string[]; budget: number }>): Allocator {
  return {
    cap: 1_000_000,
    roots: { plan: ({ candidates }) => new Map(candidates.map((c) => [c.promptId, m])) },
    prefixes: {
      continuationBudget: (mm) => mm * K,
      plan: ({ promptId, prefixes, budget }) => {
        seen?.push({ promptId, ids: prefixes.map((p) => p.id), budget });
        const plan = new Map<string, number>();
        let left = budget;
        for (const p of prefixes.slice(0, perPrompt)) {
          const k = Math.min(K, left);
          if (k > 0) plan.set(p.id, k);
          left -= k;
        }
        return plan;
      },
    },
  };
}

export function serverError(message = 'HTTP 503 (injected)'): PolicyCallError {
  return new PolicyCallError('server_error', message);
}

/** Every node's turn count and origin counts, for ledger cross-checks. */
export function treeCounts(trees: readonly RolloutTree[]) {
  let turns = 0;
  let bare = 0;
  let continuation = 0;
  for (const t of trees) {
    for (const n of Object.values(t.nodes)) {
      if (n.parent === null) continue;
      turns++;
      const parent = t.nodes[n.parent];
      const firstOfTrajectory = parent.parent === null || n.id.slice(n.id.lastIndexOf('/') + 1) !== '0' || n.origin !== parent.origin;
      if (firstOfTrajectory && n.origin === 'bare') bare++;
      if (firstOfTrajectory && n.origin === 'continuation') continuation++;
    }
  }
  return { turns, bare, continuation };
}
