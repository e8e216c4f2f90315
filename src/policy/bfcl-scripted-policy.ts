/**
 * A scripted noisy policy for BFCL, for allocation studies and tests on CPU (no model here can do
 * BFCL). It replays the entry's ground-truth calls, one call per step (a few per step when a turn has
 * more than 15), with configurable mistakes at
 * each step: a wrong argument (one argument's value changed), a skipped call, a repeated call, or an
 * early stop (it answers before the turn's calls are done). A turn with no ground-truth calls
 * (miss_func / miss_param) is answered in text at once. Its thought records how many of the turn's
 * ground-truth calls it has used ("gt k"), so its next step depends only on the turns so far and the
 * call's own random stream: it can continue from any prefix.
 */
import { callString, parseCall, type BfclEnv } from '../env/bfcl/index.ts';
import type { Rng } from '../util/rng.ts';
import type { EnvPolicies } from './kind.ts';
import type { Policy, PolicyContext, PolicyOutput } from './types.ts';

export interface BfclNoise {
  /** Chance per step of changing one argument of the call. */
  wrongArgument: number;
  /** Chance per step of skipping the call (the next one is made instead). */
  skip: number;
  /** Chance per step of making the call twice. */
  repeat: number;
  /** Chance per step of ending the turn early. */
  stop: number;
}

export const DEFAULT_BFCL_NOISE: BfclNoise = { wrongArgument: 0.04, skip: 0.02, repeat: 0.02, stop: 0.02 };

const USED = /^gt (\d+)$/;

/** Change one argument's value the way a sloppy model might (string suffix, number +1, flipped bool, shorter list). */
export function perturbCall(call: string, rng: Rng): string {
  const c = parseCall(call);
  const slots = [...c.args.map((_, i) => ['arg', i] as const), ...c.kwargs.map((_, i) => ['kw', i] as const)];
  if (slots.length === 0) return call;
  const [kind, i] = slots[rng.int(slots.length)]!;
  const value = kind === 'arg' ? c.args[i] : c.kwargs[i]![1];
  let changed = value;
  if (typeof value === 'string') changed = `${value}_x`;
  else if (typeof value === 'bigint') changed = value + 1n;
  else if (typeof value === 'number') changed = value + 1.5;
  else if (typeof value === 'boolean') changed = !value;
  else if (Array.isArray(value)) changed = value.length > 0 ? value.slice(0, -1) : ['x'];
  if (kind === 'arg') c.args[i] = changed ?? null;
  else c.kwargs[i] = [c.kwargs[i]![0], changed ?? null];
  return callString(c);
}

export class ScriptedBfclPolicy implements Policy {
  readonly name = 'bfcl-scripted';
  private readonly noise: BfclNoise;

  constructor(
    private readonly env: BfclEnv,
    noise: Partial<BfclNoise> = {},
  ) {
    this.noise = { ...DEFAULT_BFCL_NOISE, ...noise };
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const entry = this.env.entry(ctx.prompt);
    const state = this.env.restore(ctx.prompt, ctx.turns);
    const truth = entry.groundTruth[state.userTurn] ?? [];
    // Ground-truth calls used so far in this user turn: the last step's thought, if it was a call step of this turn.
    const last = ctx.turns.at(-1);
    const lastUsed = last && last.action.type === 'tool_calls' ? USED.exec(last.thought) : null;
    let used = lastUsed ? Number(lastUsed[1]) : 0;
    const answer = (text: string): PolicyOutput => ({ text, thought: text, action: { type: 'answer', input: text }, generatedTokens: 1 });
    if (used >= truth.length) return answer(truth.length === 0 ? 'I cannot do that with the functions and details I have.' : 'Done.');
    const rng = ctx.rng;
    const n = this.noise;
    const r = ctx.greedy ? 1 : rng.next();
    if (r < n.stop) return answer('Done.');
    if (r < n.stop + n.skip) {
      used += 1;
      if (used >= truth.length) return answer('Done.');
    }
    // One call per step, except that a turn with many calls is cut into at most 15 steps (BFCL stops a turn after 20).
    const size = Math.max(1, Math.ceil(truth.length / 15));
    const chunk = truth.slice(used, used + size);
    let calls = chunk;
    if (r >= n.stop + n.skip && r < n.stop + n.skip + n.repeat) calls = [...calls, calls.at(-1)!];
    else if (r >= n.stop + n.skip + n.repeat && r < n.stop + n.skip + n.repeat + n.wrongArgument) {
      const k = rng.int(calls.length);
      calls = calls.map((c, i) => (i === k ? perturbCall(c, rng) : c));
    }
    used += chunk.length;
    return { text: JSON.stringify(calls), thought: `gt ${used}`, action: { type: 'tool_calls', input: JSON.stringify(calls) }, generatedTokens: calls.length };
  }
}

/** What bfcl brings: its scripted caller acts there whatever is configured (no trainable policy here can call its functions). */
export const bfclPolicies: EnvPolicies = { name: 'bfcl', fixed: (s) => new ScriptedBfclPolicy(s.env as unknown as BfclEnv) };
