import type { BudgetLedger, TrajectoryKind } from '../budget/index.ts';
import { parseTurn } from '../env/index.ts';
import type { Environment } from '../env/types.ts';
import { PolicyCallError } from '../policy/errors.ts';
import type { Policy, PolicyOutput } from '../policy/types.ts';
import { addTurn, childId, endTrajectory, turnsTo } from '../tree/index.ts';
import type { Action, EndReason, RolloutTree, Turn, TurnError } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { backoffDelay, sleep } from './backoff.ts';
import { CancelledError, callWithTimeout, isCancellation } from './call.ts';
import type { StepRecord, Tape } from './recorder.ts';
import type { Semaphore } from './semaphore.ts';
import type { EngineSettings } from './settings.ts';
import type { Prompt } from '../tree/types.ts';

/** Reads an action out of a policy's text when the policy did not set one. */
export type ActionParser = (text: string) => { thought: string; action: Action };

/** The default parser: the Search-R1 protocol (an unusable turn becomes an 'invalid' action naming the rule). */
export const searchR1Action: ActionParser = (text) => {
  const p = parseTurn(text);
  return { thought: p.thought, action: p.action };
};

/** Everything one trajectory needs; shared by all trajectories of a prompt. */
export interface TrajectoryContext<S> {
  tree: RolloutTree;
  prompt: Prompt;
  rendered: string;
  env: Environment<S>;
  policy: Policy;
  ledger: BudgetLedger;
  settings: EngineSettings;
  semaphore: Semaphore;
  tape: Tape;
  /** The step's generator; each trajectory forks its own stream from its first node id. */
  rng: Rng;
  signal?: AbortSignal;
  greedy?: boolean;
  parseAction?: ActionParser;
  onRetry(key: string, attempt: number, error: TurnError, delayMs: number): void;
  onTurn(): void;
  /**
   * Priced budgets only: whether the budget not yet committed covers trajectory `id`, expected to cost
   * this much; true commits it (the engine settles the commitment when the trajectory ends).
   */
  covers?: (id: string, expectedCost: number) => boolean;
}

/** Where a trajectory starts: below `fromId` (root or prefix node), in child slot `slot`. */
export interface TrajectoryStart {
  fromId: string;
  slot: number;
  origin: TrajectoryKind;
  /**
   * Budgets in turns or tokens: what this trajectory is expected to cost. Its first call is made only
   * while the budget left covers that (ctx.covers); otherwise it does not start, rather than start and
   * be cut by the cap halfway (a cut trajectory spends and teaches nothing).
   */
  expectedCost?: number;
}

export interface TrajectoryResult {
  firstNodeId: string;
  /** False when the ledger refused the trajectory or it left no node (cancelled/budget before its first turn). */
  started: boolean;
  end?: EndReason;
  leafId?: string;
  reward?: number;
}

type Attempted<T> = { ok: true; value: T } | { ok: false; error: TurnError };

/**
 * Runs one episode from a start node until the environment says done, the turn limit T (counted from
 * the root) is reached, or a call fails on every attempt. Each turn (Episode.turn): reserve budget →
 * policy call (retried) → parse action → environment step (retried) → add node; it either ends the
 * episode (a result) or leaves it at its new node for the next turn.
 */
export async function runTrajectory<S>(ctx: TrajectoryContext<S>, start: TrajectoryStart): Promise<TrajectoryResult> {
  const firstNodeId = childId(start.fromId, start.slot);
  if (ctx.signal?.aborted || !ctx.ledger.tryStartTrajectory(start.origin)) return { firstNodeId, started: false };
  const episode = new Episode(ctx, start, firstNodeId);
  for (;;) {
    const ended = await episode.turn();
    if (ended) return ended;
  }
}

/** Where an episode is between turns: the environment state, the turns so far, and the node the next turn hangs under. */
class Episode<S> {
  private readonly rng: Rng;
  private readonly turns: Turn[];
  private state: S;
  private parentId: string;
  private slot: number;
  /** The episode's last node in the tree; undefined until its first turn is added. */
  private lastId: string | undefined;

  constructor(
    private readonly ctx: TrajectoryContext<S>,
    private readonly start: TrajectoryStart,
    private readonly firstNodeId: string,
  ) {
    this.rng = ctx.rng.fork(firstNodeId);
    const prefix = turnsTo(ctx.tree, start.fromId);
    this.turns = [...prefix];
    // Continuations restore the exact state after the prefix's recorded turns (no tool is called again).
    this.state = prefix.length > 0 ? ctx.env.restore(ctx.prompt, prefix) : ctx.env.reset(ctx.prompt);
    this.parentId = start.fromId;
    this.slot = start.slot;
  }

  /** One turn; the result when the episode ends with it, undefined when it goes on. */
  async turn(): Promise<TrajectoryResult | undefined> {
    const { ctx } = this;
    const nodeId = childId(this.parentId, this.slot);
    const called = await callPolicy(ctx, nodeId, this.turns, this.firstNodeId, this.rng, this.lastId === undefined ? this.start.expectedCost : undefined);
    if (!called.ok) {
      if (called.error.code === 'cancelled' || (called.error.code === 'budget' && this.lastId === undefined)) return this.endWithoutNode(called.error.code === 'cancelled' ? 'cancelled' : 'error');
      return this.endWithNode(errorTurn(called.error), 'error');
    }
    const output = called.value;
    const { thought, action } = output.action
      ? { thought: output.thought ?? '', action: output.action }
      : (ctx.parseAction ?? (ctx.env.parse ? (t: string) => ctx.env.parse!(t) : searchR1Action))(output.text);
    const turn: Turn = {
      thought,
      action,
      observation: '',
      text: output.text,
      generatedTokens: output.generatedTokens,
      ...(output.tokens ? { tokens: output.tokens } : {}),
      ...(output.entropy !== undefined ? { entropy: output.entropy } : {}),
      ...(output.logprob !== undefined ? { logprob: output.logprob } : {}),
    };
    const stepped = await stepEnv(ctx, nodeId, this.state, action, this.rng);
    // Cancelled during the tool call: the policy's turn was generated and paid for; keep it, observation empty, and stop.
    if (!stepped.ok) return this.endWithNode({ ...turn, error: stepped.error }, stepped.error.code === 'cancelled' ? 'cancelled' : 'error');
    const { record, state: next } = stepped.value;
    if (next !== undefined) this.state = next;
    turn.observation = record.observation;
    const node = addTurn(ctx.tree, this.parentId, turn, { origin: this.start.origin, slot: this.slot });
    ctx.onTurn();
    this.turns.push(turn);
    this.lastId = node.id;
    if (record.done) {
      const end: EndReason = record.reason === 'turn_limit' ? 'turn_limit' : 'answer';
      const reward = record.reward === 1 ? 1 : 0;
      endTrajectory(ctx.tree, node.id, end, reward, record.score);
      return { firstNodeId: this.firstNodeId, started: true, end, leafId: node.id, reward };
    }
    if (node.depth >= ctx.settings.maxTurns) {
      endTrajectory(ctx.tree, node.id, 'turn_limit', 0);
      return { firstNodeId: this.firstNodeId, started: true, end: 'turn_limit', leafId: node.id, reward: 0 };
    }
    this.parentId = node.id;
    this.slot = 0;
    return undefined;
  }

  /** Ends on a failed turn, which is added to the tree as the leaf (with its error). */
  private endWithNode(nodeTurn: Turn, end: EndReason): TrajectoryResult {
    const node = addTurn(this.ctx.tree, this.parentId, nodeTurn, { origin: this.start.origin, slot: this.slot });
    this.ctx.onTurn();
    endTrajectory(this.ctx.tree, node.id, end);
    return { firstNodeId: this.firstNodeId, started: true, end, leafId: node.id };
  }

  /** Ends without a new node: at the last one, or, when the episode has none, as if it never started. */
  private endWithoutNode(end: EndReason): TrajectoryResult {
    if (this.lastId === undefined) {
      // Nothing of this trajectory is in the tree: return the claim (its issued calls stay counted).
      this.ctx.ledger.refundTrajectory(this.start.origin);
      return { firstNodeId: this.firstNodeId, started: false, end };
    }
    endTrajectory(this.ctx.tree, this.lastId, end);
    return { firstNodeId: this.firstNodeId, started: true, end, leafId: this.lastId };
  }
}

function errorTurn(error: TurnError): Turn {
  return { thought: '', action: { type: 'invalid', input: '' }, observation: '', generatedTokens: 0, error };
}

/**
 * One policy call with retries. Per attempt: wait for a semaphore permit, reserve (waiting while other
 * calls' reservations may still leave room) one call of up to
 * maxTokensPerTurn tokens in the ledger, call, settle. A failed attempt settles 0 tokens but counts
 * the call: the request was made and the server spent work on it.
 */
async function callPolicy<S>(ctx: TrajectoryContext<S>, nodeId: string, turns: readonly Turn[], trajectoryId: string, rng: Rng, admitCost?: number): Promise<Attempted<PolicyOutput>> {
  const { settings, ledger, semaphore } = ctx;
  for (let attempt = 1; ; attempt++) {
    const key = `${nodeId}#${attempt}`;
    try {
      await semaphore.acquire(ctx.signal);
    } catch {
      return { ok: false, error: { code: 'cancelled', message: 'cancelled while waiting for a request slot' } };
    }
    let error: TurnError;
    let retryable = true;
    try {
      // Checked once the call holds its slot, when the spend of the calls before it is known.
      if (admitCost !== undefined && attempt === 1 && ctx.covers && !ctx.covers(trajectoryId, admitCost)) return { ok: false, error: { code: 'budget', message: 'the budget left does not cover another trajectory' } };
      const reservation = await ledger.reserveTurn(settings.maxTokensPerTurn, ctx.signal);
      if (!reservation && ctx.signal?.aborted) return { ok: false, error: { code: 'cancelled', message: 'cancelled while waiting for the budget' } };
      if (!reservation) return { ok: false, error: { code: 'budget', message: 'the budget ledger refused another policy call' } };
      try {
        const output = await ctx.tape.policy(`policy:${key}`, () =>
          callWithTimeout(
            (signal) =>
              ctx.policy.act({
                prompt: ctx.prompt,
                rendered: ctx.rendered,
                turns,
                rng: rng.fork(key),
                greedy: ctx.greedy,
                maxTokens: settings.maxTokensPerTurn,
                signal,
                callId: key,
                trajectoryId,
              }),
            settings.timeoutMs,
            ctx.signal,
          ),
        );
        reservation.settle(output.generatedTokens);
        return { ok: true, value: output };
      } catch (e) {
        if (isCancellation(e)) {
          reservation.settle(0);
          return { ok: false, error: { code: 'cancelled', message: 'cancelled while the call was in flight' } };
        }
        if (!(e instanceof PolicyCallError)) {
          reservation.release();
          throw e;
        }
        reservation.settle(0);
        error = { code: e.code, message: e.message };
        retryable = e.retryable;
      }
    } finally {
      semaphore.release();
    }
    if (!retryable || attempt >= settings.retry.maxAttempts) return { ok: false, error: { ...error, message: `${error.message} (attempt ${attempt} of ${settings.retry.maxAttempts})` } };
    const ok = await backoff(ctx, key, attempt, error, rng);
    if (!ok) return { ok: false, error: { code: 'cancelled', message: 'cancelled during retry backoff' } };
  }
}

/** One environment step with retries; any error the environment throws is a tool error. */
async function stepEnv<S>(ctx: TrajectoryContext<S>, nodeId: string, state: S, action: Action, rng: Rng): Promise<Attempted<{ record: StepRecord; state?: S }>> {
  const isToolCall = action.type !== 'answer' && action.type !== 'invalid';
  for (let attempt = 1; ; attempt++) {
    const key = `${nodeId}#${attempt}`;
    if (ctx.signal?.aborted) return { ok: false, error: { code: 'cancelled', message: 'cancelled before the tool call' } };
    let error: TurnError;
    try {
      // A tool that never answers must not stall the step: the same timeout as a policy call applies
      // (it fails as a tool_error and is retried); cancellation still wins.
      const result = await ctx.tape.step(`tool:${key}`, async () => {
        try {
          return await callWithTimeout((signal) => ctx.env.step(state, action, { signal }), ctx.settings.timeoutMs, ctx.signal);
        } catch (e) {
          if (ctx.signal?.aborted) throw new CancelledError('cancelled');
          throw e;
        }
      });
      if (isToolCall && !result.record.invalid) ctx.ledger.recordToolCall();
      return { ok: true, value: result };
    } catch (e) {
      if (isCancellation(e)) return { ok: false, error: { code: 'cancelled', message: 'cancelled during the tool call' } };
      if (isToolCall) ctx.ledger.recordToolCall();
      error = { code: 'tool_error', message: e instanceof Error ? e.message : String(e) };
    }
    if (attempt >= ctx.settings.retry.maxAttempts) return { ok: false, error: { ...error, message: `${error.message} (attempt ${attempt} of ${ctx.settings.retry.maxAttempts})` } };
    if (!(await backoff(ctx, key, attempt, error, rng))) return { ok: false, error: { code: 'cancelled', message: 'cancelled during retry backoff' } };
  }
}

async function backoff<S>(ctx: TrajectoryContext<S>, key: string, attempt: number, error: TurnError, rng: Rng): Promise<boolean> {
  // Replays skip the wait: the outcome is already on the tape.
  const delay = ctx.tape.mode === 'replay' ? 0 : backoffDelay(attempt, ctx.settings.retry, rng.fork(`backoff/${key}`));
  ctx.onRetry(key, attempt, error, delay);
  try {
    await sleep(delay, ctx.signal);
    return true;
  } catch {
    return false;
  }
}
