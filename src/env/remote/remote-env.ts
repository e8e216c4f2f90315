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
 * restore a session's state; where a server offers trace-rl's fork extension (fork.ts), each step
 * that may be branched asks the server to keep its state, and a restore of that prefix opens a session
 * from the kept state instead (no environment step), checked against the record's last turn; a fork
 * refused (the state expired or was evicted) or answered differently falls back to replay. The cost
 * (steps, wall time) is reported through restoreCost and never touches the token budget; the forks
 * and fallbacks through serverLoad.
 *
 * Sessions are a bounded resource: at most `sessions` open per server. A run may use several servers
 * of one environment (a fleet, fleet.ts): each session goes to the least-loaded one and stays there
 * for its trajectory; a restore may go to any (its replay is checked against the record). A session
 * whose connection drops is replaced (reconnect with backoff, then the history replayed and checked);
 * when its server cannot be reached, the server is marked down and the trajectory continues on
 * another by the same checked replay (a failover, counted); only when no server answers within the
 * attempts does the step fail, naming the server and the task.
 */
import { sleep } from '../../util/sleep.ts';
import type { Action, Prompt, Turn, TurnEnv } from '../../tree/types.ts';
import { EnvError, ReplayMismatch } from '../errors.ts';
import type { EnvCallOptions, Environment, RestoreCost, ServerLoad, StepOutcome } from '../types.ts';
import { actionText, parseRemoteTurn, type ActionTextMode } from './action-text.ts';
import { Fleet, ServerDown } from './fleet.ts';
import { KeptStates, prefixKey, type ForkOffer, type KeptState } from './fork.ts';
import { replyInfo, type RemoteReply } from './reply.ts';
import { CapacityWait, isCapacityRefusal, SessionLost, type RemoteServer, type RemoteSession } from './session.ts';
import { taskOf } from './tasks.ts';

export interface RemoteEnvOptions {
  /** The environment's server, or several (a fleet: same environment, same tasks). */
  server: RemoteServer | readonly RemoteServer[];
  /** Turn limit of an episode (the run's engine.maxTurns). */
  maxTurns: number;
  /** How a turn becomes the server's action text. */
  action: ActionTextMode;
  /** Success: the final reward ≥ this. */
  successThreshold: number;
  /** Most sessions open at once on each server. */
  sessions: number;
  branching: 'replay' | 'roots-only';
  /** The server's fork offer (GET /fork at build), one per server of a fleet; absent: every restore replays. */
  fork?: ForkOffer | ReadonlyArray<ForkOffer | undefined>;
  /** The server's answer timeout (env.timeoutMs): a full server (all of a fleet's full) is waited out for 10 × this. */
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
    /** The fleet's server the session is on (it changes only by a failover). */
    public member: number,
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
  private readonly servers: readonly RemoteServer[];
  private readonly fleet: Fleet;
  /** Which servers offer fork (by index). */
  private readonly forkable: boolean[];
  private readonly reconnectAttempts: number;
  private readonly reconnectDelayMs: number;
  /** Keys of the states the servers kept, by prefix (only when one offers fork and prefixes are branched). */
  private readonly kept?: KeptStates;
  /** What was sent since the last serverLoad() (see ServerLoad); each server's share is the fleet's. */
  private readonly load: Omit<ServerLoad, 'restoreMethod' | 'servers'> = emptyLoad();
  /** False once the run said it never restores (neverRestores): no step asks to keep its state. */
  private keepStates = true;

  constructor(private readonly options: RemoteEnvOptions) {
    this.servers = Array.isArray(options.server) ? options.server : [options.server as RemoteServer];
    if (this.servers.length === 0) throw new EnvError('a remote environment needs at least one server');
    const first = this.servers[0]!;
    this.name = `${first.protocol}:${first.url}${this.servers.length > 1 ? ` (+${this.servers.length - 1} more)` : ''}`;
    this.maxTurns = options.maxTurns;
    this.branching = options.branching === 'roots-only' ? 'roots-only' : 'prefixes';
    this.reconnectAttempts = options.reconnectAttempts ?? 4;
    this.reconnectDelayMs = options.reconnectDelayMs ?? 250;
    // A server that could not be reached waits out about the reconnects' backoff before it is tried again.
    this.fleet = new Fleet(
      this.servers.map((s) => s.url),
      options.sessions,
      Math.max(this.reconnectDelayMs * 8, 100),
    );
    const offers = Array.isArray(options.fork) ? options.fork : [options.fork as ForkOffer | undefined];
    this.forkable = this.servers.map((_, i) => offers[i] !== undefined);
    const offered = offers.filter((o): o is ForkOffer => o !== undefined);
    // No more keys than the servers keep together: older ones are gone there anyway.
    if (offered.length > 0 && this.branching === 'prefixes')
      this.kept = new KeptStates(
        Math.min(
          offered.reduce((a, o) => a + o.maxKept, 0),
          100_000,
        ),
        Math.max(...offered.map((o) => o.ttlS)) * 1000,
      );
  }

  /**
   * What was sent to the servers since the last call (resets, steps generated and replayed, forks,
   * fallbacks, failovers, time, each server's share); resets the counts. Counted when a request is sent,
   * so the servers' own counts of the same period match: generated + replayed steps = their steps.
   */
  serverLoad(): ServerLoad {
    const out: ServerLoad = { restoreMethod: this.kept ? 'fork' : 'replay', ...this.load, servers: this.fleet.take() };
    Object.assign(this.load, emptyLoad());
    return out;
  }

  neverRestores(): void {
    this.keepStates = false;
  }

  /** Sessions this environment holds open now, all servers together. */
  get openSessions(): number {
    return this.fleet.open;
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
    const prefix = this.kept && turns.length > 0 ? this.prefixOf(prompt, turns) : undefined;
    const kept = prefix !== undefined ? this.kept!.get(prefix) : undefined;
    if (kept) {
      const forked = await this.forkFrom(prompt, turns, kept, options.signal);
      if (forked) return forked;
      this.kept!.forget(prefix!);
    }
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

  /**
   * A session opened from the state kept at the prefix's last turn, its answer checked against that
   * turn; undefined when the server refused the fork (the key expired or was evicted) or answered
   * otherwise than the record (counted as a fallback: the caller replays). One message, no step.
   */
  private async forkFrom(prompt: Prompt, turns: readonly Turn[], kept: KeptState, signal?: AbortSignal): Promise<RemoteState | undefined> {
    let member: number;
    try {
      member = await this.fleet.acquire(signal, kept.server);
    } catch (e) {
      if (!(e instanceof ServerDown)) throw e;
      this.load.forkFallbacks++;
      return undefined;
    }
    const handle = new SessionHandle(prompt, member);
    const t0 = handle.permittedAt;
    try {
      handle.session = await this.openOn(member, signal);
      const session = handle.session;
      const reply = await this.timed(() => session.fork(kept.key, signal));
      const last = turns[turns.length - 1]!;
      if (difference(last, reply)) throw new Error('the forked state differs from the record');
    } catch (e) {
      await this.release({ handle, turn: 0, done: false });
      if (signal?.aborted) throw signal.reason;
      this.load.forkFallbacks++;
      return undefined;
    }
    // What a reconnect replays if this session drops: the prefix as recorded (the answers the server gave then).
    for (const t of turns) {
      const reply: RemoteReply = { observation: t.observation, done: false, info: {} };
      if (t.env?.reward !== undefined) reply.reward = t.env.reward;
      handle.history.push({ text: actionText(t.action, this.options.action), reply });
    }
    handle.at = turns.length;
    handle.restoreCost = { steps: 0, ms: performance.now() - t0 };
    this.load.forks++;
    return { handle, turn: turns.length, done: false };
  }

  private prefixOf(prompt: Prompt, turns: readonly Turn[]): string {
    return prefixKey(
      prompt.id,
      turns.map((t) => ({ text: actionText(t.action, this.options.action), observation: t.observation })),
    );
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
      this.fleet.release(handle.member);
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
    // Only a turn that can be a prefix is kept: one past the turn limit ends the episode whatever it answers.
    const keep = this.kept !== undefined && this.keepStates && this.forkable[handle.member]! && state.turn + 1 < this.maxTurns;
    let reply: RemoteReply;
    try {
      reply = await this.stepSafely(handle, text, options.signal, keep);
    } catch (e) {
      // The server's message names the server and its complaint; the task is ours to add (once).
      if (options.signal?.aborted || !(e instanceof Error) || e.message.includes(`task "${task}"`)) throw e;
      throw inContext(e, `task "${task}", turn ${state.turn + 1}`);
    }
    if (keep && reply.kept !== undefined && !reply.done)
      this.kept!.put(
        prefixKey(
          task,
          handle.history.map((h) => ({ text: h.text, observation: h.reply.observation })),
        ),
        { server: handle.member, key: reply.kept },
      );
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
  private async stepSafely(handle: SessionHandle, text: string, signal?: AbortSignal, keep = false): Promise<RemoteReply> {
    if (handle.broken) await this.reconnect(handle, signal);
    try {
      return await this.send(handle, text, signal, 'generated', keep);
    } catch (e) {
      if (!(e instanceof SessionLost) || signal?.aborted) {
        handle.broken = true;
        throw e;
      }
      await this.reconnect(handle, signal);
      return this.send(handle, text, signal, 'generated', keep);
    }
  }

  /** Sends one action on the handle's session and records it; counted as sent (a trajectory's step, or a replay's). */
  private async send(handle: SessionHandle, text: string, signal: AbortSignal | undefined, kind: 'generated' | 'replayed', keep = false): Promise<RemoteReply> {
    if (!handle.session) throw new SessionLost('the session is closed');
    this.fleet.countStep(handle.member);
    if (kind === 'generated') this.load.steps++;
    else this.load.replayedSteps++;
    const session = handle.session;
    const reply = await this.timed(() => session.step(text, signal, keep));
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
    let tried = 0;
    this.fleet.countFailure(handle.member);
    for (let attempt = 1; attempt <= this.reconnectAttempts; attempt++) {
      tried = attempt;
      await sleep(this.reconnectDelayMs * 2 ** (attempt - 1), signal);
      await handle.close();
      handle.at = 0;
      handle.history.length = 0;
      if (this.fleet.isDown(handle.member) && this.fleet.size > 1) await this.failOver(handle, signal);
      try {
        handle.session = await this.openOn(handle.member, signal);
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
      `${this.servers[handle.member]!.protocol} server ${this.fleet.url(handle.member)} failed during task "${handle.prompt.id}" (turn ${history.length + 1}, after ${tried} reconnect${tried === 1 ? '' : 's'}${this.fleet.size > 1 ? ` over ${this.fleet.size} servers` : ''})`,
    );
  }

  /** Moves a trajectory off its server, which is down, to the least-loaded one up (a failover when it is another). */
  private async failOver(handle: SessionHandle, signal?: AbortSignal): Promise<void> {
    const next = await this.fleet.acquire(signal);
    this.fleet.release(handle.member);
    if (next !== handle.member) this.load.failovers++;
    handle.member = next;
  }

  /** A session on one server of the fleet; a server that cannot be reached is marked down, one that answers up. */
  private async openOn(member: number, signal?: AbortSignal): Promise<RemoteSession> {
    try {
      const session = await this.servers[member]!.open(signal);
      this.fleet.markUp(member);
      this.fleet.countSession(member);
      return session;
    } catch (e) {
      if (e instanceof SessionLost && !signal?.aborted) this.fleet.markDown(member);
      throw e;
    }
  }

  /** A permit, a session and its reset, checked against the prompt; the permit is returned if any of it fails. */
  private async openHandle(prompt: Prompt, signal?: AbortSignal): Promise<SessionHandle> {
    taskOf(prompt);
    const handle = new SessionHandle(prompt, await this.fleet.acquire(signal));
    const full = new CapacityWait(this.options.timeoutMs ?? 30_000, this.reconnectDelayMs);
    try {
      for (let attempt = 1; ;) {
        try {
          handle.session = await this.openOn(handle.member, signal);
          await this.resetChecked(handle, signal);
          return handle;
        } catch (e) {
          await handle.close();
          if (signal?.aborted) throw e;
          if (isCapacityRefusal(e)) {
            // A full server (its own cap below ours): in a fleet, the next try goes to the least-loaded
            // server not known full; when every one is full, they are waited out, bounded (CapacityWait).
            const next = this.fleet.size > 1 ? (this.fleet.markFull(handle.member), this.fleet.moveNow(handle.member)) : undefined;
            if (next !== undefined) {
              handle.member = next;
              continue;
            }
            if (await full.next(signal)) continue;
            throw inContext(e, `the server${this.fleet.size > 1 ? 's' : ''} stayed full for ${full.bound}`);
          }
          // A dropped connection is retried a few times; a hang (ServerTimedOut) or a refusal would repeat.
          if (!(e instanceof SessionLost) || attempt >= this.reconnectAttempts) throw e;
          await sleep(this.reconnectDelayMs * 2 ** (attempt++ - 1), signal);
          // A server that could not be reached: the next try goes to the least-loaded one up.
          if (this.fleet.isDown(handle.member) && this.fleet.size > 1) {
            const next = await this.fleet.acquire(signal);
            this.fleet.release(handle.member);
            handle.member = next;
          }
        }
      }
    } catch (e) {
      handle.released = true;
      this.fleet.release(handle.member);
      if (e instanceof ReplayMismatch || signal?.aborted) throw e;
      throw inContext(e, `${this.servers[handle.member]!.protocol} server ${this.fleet.url(handle.member)}: task "${prompt.id}": cannot start a session`);
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

function emptyLoad(): Omit<ServerLoad, 'restoreMethod' | 'servers'> {
  return { resets: 0, steps: 0, replayedSteps: 0, forks: 0, forkFallbacks: 0, failovers: 0, ms: 0 };
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
