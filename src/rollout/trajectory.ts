import type { TrajectoryKind } from '../budget/index.ts';
import { ReplayMismatch } from '../env/errors.ts';
import { parseTurn } from '../env/search/search-r1.ts';
import type { RestoreCost } from '../env/types.ts';
import { addTurn, childId, endTrajectory, turnsTo } from '../tree/index.ts';
import type { Action, EndReason, RolloutTree, Turn, TurnError } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import type { PolicyOutput } from '../policy/types.ts';
import { CallGuard } from './call.ts';
import { callPolicy, stepEnv, type CallContext } from './retried-calls.ts';

/** Reads an action out of a policy's text when the policy did not set one. */
export type ActionParser = (text: string) => { thought: string; action: Action };

/** The default parser: the Search-R1 protocol (an unusable turn becomes an 'invalid' action naming the rule). */
export const searchR1Action: ActionParser = (text) => {
  const p = parseTurn(text);
  return { thought: p.thought, action: p.action };
};

/** Everything one trajectory needs; shared by all trajectories of a prompt. */
export interface TrajectoryContext<S> extends CallContext<S> {
  tree: RolloutTree;
  /** The step's generator; each trajectory forks its own stream from its first node id. */
  rng: Rng;
  parseAction?: ActionParser;
  onTurn(): void;
  /** A prefix was restored by replay (env.restoreCost), or a replay differed after spending this. */
  onRestore?(cost: RestoreCost): void;
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
  /** Set when the continuation's prefix could not be replayed exactly (env.restore threw ReplayMismatch): it did not run. */
  replayMismatch?: ReplayMismatch;
}

/**
 * Runs one episode from a start node until the environment says done, the turn limit T (counted from
 * the root) is reached, or a call fails on every attempt. Each turn (Episode.run): reserve budget →
 * policy call (retried) → parse action → environment step (retried) → add node; it either ends the
 * episode (a result) or leaves it at its new node for the next turn.
 */
export async function runTrajectory<S>(ctx: TrajectoryContext<S>, start: TrajectoryStart): Promise<TrajectoryResult> {
  const firstNodeId = childId(start.fromId, start.slot);
  if (ctx.signal?.aborted || !ctx.ledger.tryStartTrajectory(start.origin)) return { firstNodeId, started: false };
  const episode = new Episode(ctx, start, firstNodeId);
  try {
    // Awaited only when the environment's reset / restore is asynchronous (a server's session), so
    // in-process environments run with the same microtasks as before (golden trees under token budgets).
    const began = episode.begin();
    if (began !== undefined) {
      const failed = await began;
      if (failed) return failed;
    }
    return await episode.run();
  } finally {
    episode.guard.close();
    const released = episode.release();
    if (released) await released;
  }
}

/** Where an episode is between turns: the environment state, the turns so far, and the node the next turn hangs under. */
class Episode<S> {
  private readonly rng: Rng;
  readonly guard: CallGuard;
  private readonly turns: Turn[];
  private state!: S;
  /** False until reset / restore gave a state (nothing to release before). */
  private hasState = false;
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
    this.guard = new CallGuard(ctx.settings.timeoutMs, ctx.signal);
    const prefix = turnsTo(ctx.tree, start.fromId);
    this.turns = [...prefix];
    this.parentId = start.fromId;
    this.slot = start.slot;
  }

  /**
   * Sets the first state: a continuation restores the state after its prefix's recorded turns (an
   * in-process environment without calling a tool; a server's by replay), a bare rollout resets.
   * Synchronous environments return undefined here; an asynchronous one a promise of undefined (ready)
   * or of the result the episode ended with (restore failed).
   */
  begin(): Promise<TrajectoryResult | undefined> | undefined {
    const { ctx } = this;
    let first: S | Promise<S>;
    try {
      const options = ctx.signal ? { signal: ctx.signal } : undefined;
      first = this.turns.length > 0 ? ctx.env.restore(ctx.prompt, this.turns, options) : ctx.env.reset(ctx.prompt, options);
    } catch (e) {
      return Promise.resolve(this.beginFailed(e));
    }
    if (!isPromise(first)) {
      this.setFirst(first);
      return undefined;
    }
    return first.then(
      (state) => {
        this.setFirst(state);
        const cost = this.turns.length > 0 ? ctx.env.restoreCost?.(state) : undefined;
        if (cost) ctx.onRestore?.(cost);
        return undefined;
      },
      (e: unknown) => this.beginFailed(e),
    );
  }

  private setFirst(state: S): void {
    this.state = state;
    this.hasState = true;
  }

  /**
   * Reset or restore failed. A replay that differed from the record: the continuation does not run (its
   * claim is returned) and is reported. Cancelled: as if never started. Anything else (the server died,
   * refused the session): the trajectory fails with an error node naming it, as a failed tool step does.
   */
  private beginFailed(e: unknown): TrajectoryResult {
    if (e instanceof ReplayMismatch) {
      if (e.cost) this.ctx.onRestore?.(e.cost);
      return { ...this.endWithoutNode('error'), replayMismatch: e };
    }
    if (this.ctx.signal?.aborted) return this.endWithoutNode('cancelled');
    const message = e instanceof Error ? e.message : String(e);
    const what = this.turns.length > 0 ? 'restoring the prefix' : 'resetting the environment';
    return this.endWithNode(errorTurn({ code: 'tool_error', message: `${what}: ${message}` }), 'error');
  }

  /** Frees the state's outside resources (env.release); a failure to free is not the trajectory's failure. */
  release(): Promise<void> | undefined {
    const release = this.ctx.env.release;
    if (!release || !this.hasState) return undefined;
    try {
      const done = release.call(this.ctx.env, this.state);
      return isPromise(done) ? done.catch(() => undefined) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The episode's turns, until one ends it (its result). One async function for them all, not one a
   * turn: with thousands of calls in flight, each async frame a call waits in (its generator, promise
   * and reactions) stays alive for the call's round trip and is copied by the collections meanwhile.
   * A turn: policy call (retried) → parse action → environment step (retried) → add node.
   */
  async run(): Promise<TrajectoryResult> {
    const { ctx } = this;
    for (;;) {
      const nodeId = childId(this.parentId, this.slot);
      const called = await callPolicy(ctx, {
        nodeId,
        turns: this.turns,
        trajectoryId: this.firstNodeId,
        rng: this.rng,
        guard: this.guard,
        // Work already started goes first: prompts finish early, so expansion overlaps the bare rollouts.
        // Not under priced budgets (ctx.covers), where admitting a trajectory depends on the order calls
        // get slots: there the queue stays first come, first served, so a run's trees stay reproducible.
        priority: !ctx.covers && (this.lastId !== undefined || this.start.origin === 'continuation') ? 'urgent' : 'normal',
        ...(this.lastId === undefined ? { admitCost: this.start.expectedCost } : {}),
      });
      if (!called.ok) {
        // Out of context after some turns: keep what fit, truncated there, as a failure (reward 0) marked
        // 'context', so it still teaches (a target and an advantage sample) instead of vanishing. With no
        // turn yet the prompt alone does not fit: nothing to keep, an error like any other.
        if (called.error.code === 'context_overflow' && this.lastId !== undefined) {
          endTrajectory(ctx.tree, this.lastId, 'context', 0);
          return { firstNodeId: this.firstNodeId, started: true, end: 'context', leafId: this.lastId, reward: 0 };
        }
        if (called.error.code === 'cancelled' || (called.error.code === 'budget' && this.lastId === undefined))
          return this.endWithoutNode(called.error.code === 'cancelled' ? 'cancelled' : 'error');
        return this.endWithNode(errorTurn(called.error), 'error');
      }
      const output = called.value;
      const { thought, action } = output.action
        ? { thought: output.thought ?? '', action: output.action }
        : (ctx.parseAction ?? (ctx.env.parse ? (t: string) => ctx.env.parse!(t) : searchR1Action))(output.text);
      const turn = newTurn(thought, action, output);
      const stepped = await stepEnv(ctx, nodeId, this.state, action, this.rng, this.guard);
      // Cancelled during the tool call: the policy's turn was generated and paid for; keep it, observation empty, and stop.
      if (!stepped.ok) return this.endWithNode({ ...turn, error: stepped.error }, stepped.error.code === 'cancelled' ? 'cancelled' : 'error');
      const { record, state: next } = stepped.value;
      if (next !== undefined) this.state = next;
      turn.observation = record.observation;
      if (record.env) turn.env = record.env;
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
    }
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

function isPromise<T>(x: T | Promise<T>): x is Promise<T> {
  return typeof (x as { then?: unknown } | null)?.then === 'function';
}

/**
 * A generated turn, its observation still empty. A turn lives as long as its tree, and a field added to
 * an object after it was made costs a second object (its property store) for that whole time, so the
 * usual shapes are written whole; the keys keep one order either way (stored trees are compared as text).
 */
function newTurn(thought: string, action: Action, o: PolicyOutput): Turn {
  const { text, generatedTokens, tokens, entropy, logprob } = o;
  if (entropy === undefined && logprob !== undefined)
    return tokens
      ? { thought, action, observation: '', text, generatedTokens, tokens, logprob }
      : { thought, action, observation: '', text, generatedTokens, logprob };
  const turn: Turn = { thought, action, observation: '', text, generatedTokens };
  if (tokens) turn.tokens = tokens;
  if (entropy !== undefined) turn.entropy = entropy;
  if (logprob !== undefined) turn.logprob = logprob;
  return turn;
}

function errorTurn(error: TurnError): Turn {
  return { thought: '', action: { type: 'invalid', input: '' }, observation: '', generatedTokens: 0, error };
}
