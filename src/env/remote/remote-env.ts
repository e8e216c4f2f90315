/**
 * An environment that runs as a server (OpenEnv, AgentGym): the Environment contract over sessions.
 * A state is a handle on one session, which steps forward only and belongs to one trajectory; the
 * engine releases it (closing the session) when the trajectory ends, however it ends.
 *
 * Branching by replay: `restore(prompt, turns)` opens a session of its own, resets it with the task's
 * parameters, replays the prefix's recorded actions and checks every answer against the record (the
 * first observation against the prompt, then each observation, the raw reward where one was recorded,
 * and that no prefix turn ended the episode). A difference throws ReplayMismatch: the environment is
 * not replay-deterministic there, and the engine skips that continuation. Neither protocol can save and
 * restore a session's state, so replay is the only way back to a prefix; its cost (steps, wall time)
 * is reported through restoreCost and never touches the token budget.
 *
 * Sessions are a bounded resource: at most `sessions` open per server (SessionPermits); a session
 * whose connection drops is replaced (reconnect with backoff, then the history replayed and checked);
 * a server that stays gone fails the step with a message naming the server and the task.
 */
import { sleep } from '../../util/sleep.ts';
import type { Action, Prompt, Turn, TurnEnv } from '../../tree/types.ts';
import { EnvError, ReplayMismatch } from '../errors.ts';
import type { EnvCallOptions, Environment, RestoreCost, ServerLoad, StepOutcome } from '../types.ts';
import { actionText, parseRemoteTurn, type ActionTextMode } from './action-text.ts';
import { replyInfo, type RemoteReply } from './reply.ts';
import { CapacityWait, isCapacityRefusal, SessionLost, SessionPermits, type RemoteServer, type RemoteSession } from './session.ts';
import { taskOf } from './tasks.ts';

export interface RemoteEnvOptions {
  server: RemoteServer;
  /** Turn limit of an episode (the run's engine.maxTurns). */
  maxTurns: number;
  /** How a turn becomes the server's action text. */
  action: ActionTextMode;
  /** Success: the final reward ≥ this. */
  successThreshold: number;
  /** Most sessions open at once on the server. */
  sessions: number;
  branching: 'replay' | 'roots-only';
  /** The server's answer timeout (env.timeoutMs): a full server is waited out for 10 × this. */
  timeoutMs?: number;
  /** Attempts to reopen a dropped session before the step fails; the wait doubles from reconnectDelayMs. */
  reconnectAttempts?: number;
  reconnectDelayMs?: number;
}

/** One server session and what was sent on it; shared by the states of one trajectory. */
class SessionHandle {
  session?: RemoteSession;
  /** Turns taken on the session. */
  at = 0;
  /** Each action text sent and the answer it got (what a reconnect replays and checks). */
  readonly history: Array<{ text: string; reply: RemoteReply }> = [];
  /** Set when a step failed midway: the session's position is unknown, so the next step reconnects first. */
  broken = false;
  released = false;
  restoreCost?: RestoreCost;
  /** When the session's permit was granted (performance.now()). */
  readonly permittedAt = performance.now();

  constructor(
    readonly prompt: Prompt,
    readonly permits: SessionPermits,
  ) {}

  async close(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    if (s) await s.close();
  }
}

export interface RemoteState {
  readonly handle: SessionHandle;
  readonly turn: number;
  readonly done: boolean;
}

export class RemoteEnv implements Environment<RemoteState> {
  readonly name: string;
  readonly maxTurns: number;
  readonly branching: 'prefixes' | 'roots-only';
  private readonly permits: SessionPermits;
  private readonly reconnectAttempts: number;
  private readonly reconnectDelayMs: number;
  private load: ServerLoad = { resets: 0, steps: 0, replayedSteps: 0, ms: 0 };

  constructor(private readonly options: RemoteEnvOptions) {
    this.name = `${options.server.protocol}:${options.server.url}`;
    this.maxTurns = options.maxTurns;
    this.branching = options.branching === 'roots-only' ? 'roots-only' : 'prefixes';
    this.permits = new SessionPermits(options.sessions);
    this.reconnectAttempts = options.reconnectAttempts ?? 4;
    this.reconnectDelayMs = options.reconnectDelayMs ?? 250;
  }

  /** Sessions this environment holds open now. */
  get openSessions(): number {
    return this.permits.open;
  }

  /** The prompt is the task's first observation, fetched when the kind was built. */
  render(prompt: Prompt): string {
    return taskOf(prompt).observation;
  }

  parse(text: string): { thought: string; action: Action } {
    return parseRemoteTurn(text, this.options.action);
  }

  async reset(prompt: Prompt, options: EnvCallOptions = {}): Promise<RemoteState> {
    const handle = await this.openHandle(prompt, options.signal);
    return { handle, turn: 0, done: false };
  }

  async restore(prompt: Prompt, turns: readonly Turn[], options: EnvCallOptions = {}): Promise<RemoteState> {
    const handle = await this.openHandle(prompt, options.signal);
    // Timed from the session's permit on: waiting for a free session is contention, not the replay's cost.
    const t0 = handle.permittedAt;
    try {
      for (const [i, turn] of turns.entries()) {
        if (options.signal?.aborted) throw options.signal.reason;
        const reply = await this.send(handle, actionText(turn.action, this.options.action), options.signal, 'replayed');
        const differs = difference(turn, reply);
        if (differs) throw new ReplayMismatch(prompt.id, i, differs.field, differs.recorded, differs.replayed, { steps: i + 1, ms: performance.now() - t0 });
      }
    } catch (e) {
      await this.release({ handle, turn: 0, done: false });
      throw e;
    }
    handle.restoreCost = { steps: turns.length, ms: performance.now() - t0 };
    return { handle, turn: turns.length, done: false };
  }

  takeServerLoad(): ServerLoad {
    const load = this.load;
    this.load = { resets: 0, steps: 0, replayedSteps: 0, ms: 0 };
    return load;
  }

  restoreCost(state: RemoteState): RestoreCost | undefined {
    const cost = state.handle.restoreCost;
    state.handle.restoreCost = undefined;
    return cost;
  }

  async release(state: RemoteState): Promise<void> {
    const { handle } = state;
    if (handle.released) return;
    handle.released = true;
    try {
      await handle.close();
    } finally {
      handle.permits.release();
    }
  }

  async step(state: RemoteState, action: Action, options: { signal?: AbortSignal } = {}): Promise<StepOutcome<RemoteState>> {
    const { handle } = state;
    const task = handle.prompt.id;
    if (state.done) throw new EnvError(`${this.name}: step called on a finished episode (task "${task}")`);
    if (handle.released) throw new EnvError(`${this.name}: step called on a released session (task "${task}")`);
    if (state.turn !== handle.at)
      throw new EnvError(`${this.name}: task "${task}": a server session steps forward only; this state is at turn ${state.turn}, its session at ${handle.at}`);
    // Under `input` an unparseable turn has no action text: what its input holds is trace-rl's own
    // diagnostic, and sending it would spend the environment's move on text no model wrote. It is not
    // sent; the trajectory ends there, invalid, with reward 0 (docs/environments.md).
    if (action.type === 'invalid' && this.options.action === 'input')
      return {
        state: { handle, turn: state.turn + 1, done: true },
        observation: `not sent: ${action.input}`,
        done: true,
        reward: 0,
        reason: 'invalid_action',
        invalid: true,
      };
    const text = actionText(action, this.options.action);
    let reply: RemoteReply;
    try {
      reply = await this.stepSafely(handle, text, options.signal);
    } catch (e) {
      // The server's message names the server and its complaint; the task is ours to add (once).
      if (options.signal?.aborted || !(e instanceof Error) || e.message.includes(`task "${task}"`)) throw e;
      throw inContext(e, `task "${task}", turn ${state.turn + 1}`);
    }
    const info = replyInfo(reply.info, `${this.name} (task "${task}")`);
    const turn = state.turn + 1;
    const atLimit = !reply.done && turn >= this.maxTurns;
    const done = reply.done || atLimit;
    const env: TurnEnv = {};
    if (reply.reward !== undefined) env.reward = reply.reward;
    if (info.candidates) env.candidates = info.candidates;
    const outcome: StepOutcome<RemoteState> = { state: { handle, turn, done }, observation: reply.observation, done };
    if (reply.done) {
      const raw = reply.reward ?? 0;
      outcome.reward = raw >= this.options.successThreshold ? 1 : 0;
      outcome.score = raw;
    } else if (atLimit) outcome.reward = 0;
    const reason = atLimit ? 'turn_limit' : (info.reason ?? (reply.done ? 'answer' : undefined));
    if (reason !== undefined) outcome.reason = reason;
    if (info.invalid) outcome.invalid = true;
    if (Object.keys(env).length > 0) outcome.env = env;
    return outcome;
  }

  /** A step on the handle's session; a failure leaves the session's position unknown (broken: the next step reconnects). */
  private async stepSafely(handle: SessionHandle, text: string, signal?: AbortSignal): Promise<RemoteReply> {
    if (handle.broken) await this.reconnect(handle, signal);
    try {
      return await this.send(handle, text, signal, 'generated');
    } catch (e) {
      if (!(e instanceof SessionLost) || signal?.aborted) {
        handle.broken = true;
        throw e;
      }
      await this.reconnect(handle, signal);
      return this.send(handle, text, signal, 'generated');
    }
  }

  /** Sends one action on the handle's session and records it; counted as sent (a trajectory's step, or a replay's). */
  private async send(handle: SessionHandle, text: string, signal: AbortSignal | undefined, kind: 'generated' | 'replayed'): Promise<RemoteReply> {
    if (!handle.session) throw new SessionLost('the session is closed');
    if (kind === 'generated') this.load.steps++;
    else this.load.replayedSteps++;
    const reply = await this.timed(() => handle.session!.step(text, signal));
    handle.at++;
    handle.history.push({ text, reply });
    return reply;
  }

  /** A server call, its wall time added to the load. */
  private async timed<T>(call: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await call();
    } finally {
      this.load.ms += performance.now() - t0;
    }
  }

  /**
   * A new session in place of the handle's (dropped, or left midway by a failed step): backoff,
   * reopen, reset, replay the history, each answer checked against the first. A server that does not
   * come back within the attempts fails the step, naming itself and the task.
   */
  private async reconnect(handle: SessionHandle, signal?: AbortSignal): Promise<void> {
    const history = handle.history.splice(0);
    let last: unknown;
    for (let attempt = 1; attempt <= this.reconnectAttempts; attempt++) {
      await sleep(this.reconnectDelayMs * 2 ** (attempt - 1), signal);
      await handle.close();
      handle.at = 0;
      handle.history.length = 0;
      try {
        handle.session = await this.options.server.open(signal);
        await this.resetChecked(handle, signal);
        for (const [i, h] of history.entries()) {
          const reply = await this.send(handle, h.text, signal, 'replayed');
          if (reply.observation !== h.reply.observation || reply.done !== h.reply.done || reply.reward !== h.reply.reward)
            throw new EnvError(
              `${this.name}: task "${handle.prompt.id}": the session was lost and its replay differed at turn ${i} (the environment is not replay-deterministic)`,
            );
        }
        handle.broken = false;
        return;
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (e instanceof EnvError) throw e;
        last = e;
        // Only a lost connection or a full server may pass by waiting; a hang or a refusal would repeat.
        if (!(e instanceof SessionLost || isCapacityRefusal(e))) break;
      }
    }
    handle.broken = true;
    throw inContext(
      last,
      `${this.options.server.protocol} server ${this.options.server.url} failed during task "${handle.prompt.id}" (turn ${history.length + 1})`,
    );
  }

  /** A permit, a session and its reset, checked against the prompt; the permit is returned if any of it fails. */
  private async openHandle(prompt: Prompt, signal?: AbortSignal): Promise<SessionHandle> {
    taskOf(prompt);
    await this.permits.acquire(signal);
    const handle = new SessionHandle(prompt, this.permits);
    const full = new CapacityWait(this.options.timeoutMs ?? 30_000, this.reconnectDelayMs);
    try {
      for (let attempt = 1; ;) {
        try {
          handle.session = await this.options.server.open(signal);
          await this.resetChecked(handle, signal);
          return handle;
        } catch (e) {
          await handle.close();
          if (signal?.aborted) throw e;
          // A full server (its own cap below ours) is waited out, bounded; a dropped connection retried a few times.
          if (isCapacityRefusal(e)) {
            if (await full.next(signal)) continue;
            throw inContext(e, `the server stayed full for ${full.bound}`);
          }
          if (!(e instanceof SessionLost) || attempt >= this.reconnectAttempts) throw e;
          await sleep(this.reconnectDelayMs * 2 ** (attempt++ - 1), signal);
        }
      }
    } catch (e) {
      handle.released = true;
      this.permits.release();
      if (e instanceof ReplayMismatch || signal?.aborted) throw e;
      throw inContext(e, `${this.options.server.protocol} server ${this.options.server.url}: task "${prompt.id}": cannot start a session`);
    }
  }

  /** Resets the handle's session with its task; the first observation must be the prompt the policy was shown. */
  private async resetChecked(handle: SessionHandle, signal?: AbortSignal): Promise<void> {
    const task = taskOf(handle.prompt);
    this.load.resets++;
    const reply = await this.timed(() => handle.session!.reset(task.params, signal));
    if (reply.observation !== task.observation) throw new ReplayMismatch(handle.prompt.id, 0, 'prompt', task.observation, reply.observation);
  }
}

/**
 * The error with what was being done put in front of its message, its class kept: the class says who
 * failed (src/cli/server-failure.ts) and whether a retry may help (ServerTimedOut, RemoteProtocolError).
 */
function inContext(e: unknown, doing: string): Error {
  if (!(e instanceof Error)) return new Error(`${doing}: ${String(e)}`);
  e.message = `${doing}: ${e.message}`;
  return e;
}

/** What differs between a recorded prefix turn and its replay, if anything. */
function difference(turn: Turn, reply: RemoteReply): { field: string; recorded: string; replayed: string } | undefined {
  if (reply.observation !== turn.observation) return { field: 'observation', recorded: turn.observation, replayed: reply.observation };
  const recorded = turn.env?.reward;
  if (recorded !== undefined && reply.reward !== recorded) return { field: 'reward', recorded: String(recorded), replayed: String(reply.reward) };
  if (reply.done) return { field: 'done', recorded: 'false', replayed: 'true' };
  return undefined;
}
