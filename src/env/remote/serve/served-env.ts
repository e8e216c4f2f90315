/**
 * An in-process environment kind (the world, the simulator, …) as a server environment's sessions,
 * whatever the protocol that carries them (`trace-rl env serve`). The tasks are the kind's prompts,
 * train then test, by index: OpenEnv's `seed`, AgentGym's `data_idx` (or `question_id`, a prompt id).
 * A reset answers the prompt as rendered for the policy; a step reads the action text (one tag,
 * `<search>q</search>`, exactly; any other text through the kind's parser) and answers the observation,
 * the reward when the episode ends (the kind's raw score, e.g. the world's token F1; the client applies
 * its own success threshold), and in the side channel the candidate actions the kind lists for the
 * next turn, why the episode ended and whether the action was invalid.
 *
 * `perturb` makes the server not replay-deterministic on purpose (for tests and demonstrations): every
 * step's observation names the session it was made in, so a replay in another session differs.
 * `stepDelayMs` makes every step take that long (a latency-bound environment, for benchmarks).
 * `fork` offers the fork extension (../fork.ts): a step asked to keep its state keeps a copy (the kind's
 * states are values, so a copy is the state itself) in a bounded store, and a new session can start from it.
 */
import type { EnvironmentSetup } from '../../kind.ts';
import { parseTurn } from '../../search/search-r1.ts';
import type { Prompt, Turn, TurnCandidates } from '../../../tree/types.ts';
import { oneTagAction } from '../action-text.ts';
import { sleep } from '../../../util/sleep.ts';
import type { ForkOffer } from '../fork.ts';
import type { RemoteReply } from '../reply.ts';
import { KeptStore } from './kept-states.ts';

export interface ServedEnvOptions {
  /** Most sessions open at once; one more is refused (OpenEnv's max_concurrent_envs). */
  maxSessions: number;
  perturb?: boolean;
  /** Wall time every step takes, ms (0: none). */
  stepDelayMs?: number;
  /** Offer fork: the kept states' bounds. Absent: no fork (GET /fork is not found). */
  fork?: ForkOffer;
  /**
   * A session unused this long (no reset, step or fork) is closed by reapIdle: a client killed with
   * kill -9 never closes its sessions, and they would keep the server full for good.
   */
  idleTimeoutMs?: number;
}

/** A session's state at a turn, as kept for forks: enough to continue and to answer that turn again. */
interface KeptTurn {
  prompt: Prompt;
  state: unknown;
  turns: Turn[];
  reply: RemoteReply;
}

export class ServedSession {
  prompt?: Prompt;
  state?: unknown;
  turns: Turn[] = [];
  done = false;
  closed = false;
  /** When a reset or a step last used it (Date.now()). */
  lastUsed = Date.now();
  /** What the transport does when the session is reaped (close its socket, forget its id). */
  onReap?: () => void;
  constructor(readonly number: number) {}
}

/** A client asked something the served kind cannot do (unknown task, a step before reset): the message says what. */
export class ServedEnvError extends Error {
  override name = 'ServedEnvError';
}

export class ServedEnv {
  readonly prompts: Prompt[];
  private readonly byId: Map<string, number>;
  private opened = 0;
  private readonly live = new Set<ServedSession>();
  /**
   * What the server did, for clients and tests that reconcile their own counts (GET /sessions): steps
   * are environment steps taken; a fork takes none (counted under forks), nor is it a reset.
   */
  readonly counts = { opened: 0, reaped: 0, resets: 0, steps: 0, forks: 0 };
  private readonly kept?: KeptStore<KeptTurn>;

  constructor(
    readonly setup: EnvironmentSetup,
    readonly kind: string,
    private readonly options: ServedEnvOptions,
  ) {
    this.prompts = [...setup.train, ...setup.test];
    this.byId = new Map(this.prompts.map((p, i) => [p.id, i]));
    if (options.fork) this.kept = new KeptStore(options.fork.maxKept, options.fork.ttlS * 1000);
  }

  /** The fork offer GET /fork answers, or undefined when this server does not fork. */
  get forkOffer(): ForkOffer | undefined {
    return this.options.fork;
  }

  /** States kept for forks now. */
  get keptStates(): number {
    return this.kept?.size ?? 0;
  }

  /** Environment steps taken (forks take none): what a client's cost accounting can be checked against. */
  get steps(): number {
    return this.counts.steps;
  }

  get openSessions(): number {
    return this.live.size;
  }

  get maxSessions(): number {
    return this.options.maxSessions;
  }

  get idleTimeoutMs(): number | undefined {
    return this.options.idleTimeoutMs;
  }

  /** A new session, or undefined when the cap is reached. */
  open(): ServedSession | undefined {
    if (this.live.size >= this.options.maxSessions) return undefined;
    const session = new ServedSession(++this.opened);
    this.live.add(session);
    this.counts.opened++;
    return session;
  }

  /** Ends a session (again: nothing). */
  close(session: ServedSession): void {
    if (session.closed) return;
    session.closed = true;
    this.live.delete(session);
  }

  /** Closes every session idle for longer than idleTimeoutMs (none without one); returns how many. */
  reapIdle(now = Date.now()): number {
    const limit = this.options.idleTimeoutMs;
    if (limit === undefined) return 0;
    let reaped = 0;
    for (const s of [...this.live]) {
      if (now - s.lastUsed <= limit) continue;
      this.close(s);
      s.onReap?.();
      reaped++;
    }
    this.counts.reaped += reaped;
    return reaped;
  }

  /** Resets `session` to the task the parameters name. */
  async reset(session: ServedSession, params: Record<string, unknown>): Promise<RemoteReply> {
    const prompt = this.taskOf(params);
    session.lastUsed = Date.now();
    this.counts.resets++;
    session.prompt = prompt;
    session.state = await this.setup.env.reset(prompt);
    session.turns = [];
    session.done = false;
    return { observation: this.setup.env.render(prompt), done: false, info: this.candidatesInfo(prompt, []) };
  }

  /**
   * A step; `keep` (the fork extension) keeps the state it reaches and answers its key as `kept`,
   * unless the episode ended there (nothing can continue from it) or this server does not fork.
   */
  async step(session: ServedSession, text: string, keep = false): Promise<RemoteReply> {
    const prompt = session.prompt;
    if (!prompt) throw new ServedEnvError('step before reset: reset the session with a task first');
    if (session.done) throw new ServedEnvError(`the episode of task "${prompt.id}" has ended: reset the session`);
    session.lastUsed = Date.now();
    this.counts.steps++;
    const { thought, action } = this.readAction(text);
    if (this.options.stepDelayMs) await sleep(this.options.stepDelayMs);
    const o = await this.setup.env.step(session.state, action);
    session.state = o.state;
    session.done = o.done;
    const observation = this.options.perturb ? `${o.observation}\n[session ${session.number}]` : o.observation;
    session.turns.push({ thought, action, observation: o.observation });
    const info: Record<string, unknown> = { ...(o.done ? {} : this.candidatesInfo(prompt, session.turns)) };
    if (o.reason !== undefined) info.reason = o.reason;
    if (o.invalid) info.invalid = true;
    const reply: RemoteReply = { observation, ...(o.done ? { reward: o.score ?? o.reward ?? 0 } : {}), done: o.done, info };
    if (keep && this.kept && !o.done) reply.kept = this.kept.keep({ prompt, state: session.state, turns: [...session.turns], reply: { ...reply } });
    return reply;
  }

  /** Starts `session` from the state kept under `key` (a copy: the kept state stays for other forks); answers that turn's reply. */
  fork(session: ServedSession, key: string): RemoteReply {
    if (!this.kept) throw new ServedEnvError('this server does not fork (start it with --fork-keep)');
    const k = this.kept.get(key);
    if (!k) throw new ServedEnvError('no kept state under that key (it expired or was dropped for newer ones): replay the prefix instead');
    session.lastUsed = Date.now();
    this.counts.forks++;
    session.prompt = k.prompt;
    session.state = k.state;
    session.turns = [...k.turns];
    session.done = false;
    return { ...k.reply };
  }

  private readAction(text: string): { thought: string; action: { type: string; input: string } } {
    const exact = oneTagAction(text);
    if (exact) return { thought: '', action: exact };
    return this.setup.env.parse ? this.setup.env.parse(text) : parseTurn(text);
  }

  private candidatesInfo(prompt: Prompt, turns: readonly Turn[]): { candidates?: TurnCandidates } {
    const c = this.setup.candidates?.(prompt, turns);
    return c ? { candidates: { search: [...c.search], answer: [...c.answer], ...(c.tool ? { tool: [...c.tool] } : {}) } } : {};
  }

  private taskOf(params: Record<string, unknown>): Prompt {
    const id = params.question_id;
    if (typeof id === 'string') {
      const i = this.byId.get(id);
      if (i === undefined) throw new ServedEnvError(`no task with question_id "${id.slice(0, 100)}"`);
      return this.prompts[i]!;
    }
    const n = params.seed ?? params.data_idx;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= this.prompts.length)
      throw new ServedEnvError(
        `a task is an index 0 ≤ n < ${this.prompts.length} (seed / data_idx) or a question_id; got ${JSON.stringify(params).slice(0, 100)}`,
      );
    return this.prompts[n]!;
  }
}
