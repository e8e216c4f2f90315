/**
 * `POST /api/v1/retrieve_futures`: the SDK's one long-poll per sampling session (src/tinker/lib/
 * session_futures_poller.py, types/futures_retrieve_request.py and future_completion.py). A client
 * that samples through a sampling session asks once for every request of it that completed since its
 * cursor, instead of polling `retrieve_future` per sample while the work runs; it then fetches each
 * result with one `retrieve_future`. A tree's fan-out (many samples of one policy at once) is many
 * requests of one sampling session, so this is one held request instead of one poll loop per sample.
 *
 * Request `{target: {type: "sampling_session", sampling_session_id, cloned_sampler_id}, prev_cursor,
 * timeout}`; answer `{completions: [{state: "finished" | "failed", request_id}], cursor}`. Events at or
 * before `prev_cursor` are seen and dropped; with none newer, the poll is held until one comes or
 * `timeout` (at most 30 s, as the SDK expects of a server) passes, and then answered empty.
 *
 * `POST /api/v1/join_sampling_session {sampling_session_id}` gives a further client of a sampling
 * session (an SDK sampling client sent to another process) its number, `client_counter` (the first
 * client is 0); that client's seq_ids start at its number × 10⁹ and it polls with `cloned_sampler_id`
 * set to it, so each client's poll gets its own requests' completions (types/
 * join_sampling_session_*.py, futures_retrieve_request.py).
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { HttpError, readJson } from '../../http/index.ts';

/** The longest a poll is held (the SDK's client waits 45 s for an answer). */
const MAX_HOLD_MS = 30_000;

/** A cloned client's seq_ids start at its number times this (the SDK's `seq_id // 1_000_000_000`). */
const CLONE_SEQ_STRIDE = 1_000_000_000;

const joinSchema = z.looseObject({ sampling_session_id: z.string().min(1).max(200) });

const retrieveFuturesSchema = z.looseObject({
  target: z.looseObject({
    type: z.literal('sampling_session').default('sampling_session'),
    sampling_session_id: z.string().min(1).max(200),
    cloned_sampler_id: z.number().int().min(0).default(0),
  }),
  prev_cursor: z.number().int().min(0).default(0),
  timeout: z.number().min(0).nullish(),
});

export interface Completion {
  state: 'finished' | 'failed';
  request_id: string;
}

interface SessionLog {
  /** Completions not yet seen, oldest first, each with its cursor. */
  events: Array<{ cursor: number; completion: Completion }>;
  last: number;
  /** Polls held until the next completion. */
  waiting: Set<() => void>;
}

/**
 * The completions of each sampling session's requests, in order, per client of the session. At most
 * `maxEvents` unseen ones are kept per client (the oldest go first: a client that never polls cannot
 * grow it), at most `maxEvents` clients join one session, and logs follow the sampling sessions the
 * routes keep (`forget` when one is dropped).
 */
export class SessionCompletions {
  /** Each session's clients' logs, by client number (0: the client that created it). */
  private readonly logs = new Map<string, SessionLog[]>();

  constructor(private readonly maxEvents: number) {}

  private static fresh(): SessionLog {
    return { events: [], last: 0, waiting: new Set() };
  }

  /** Records request `id` of `session` (its `seqId` says which client sent it) as complete once `outcome` settles. */
  follow(session: string, seqId: number, id: string, outcome: Promise<{ ok: boolean }>): void {
    void outcome.then((o) => {
      const log = this.logs.get(session)?.[Math.floor(seqId / CLONE_SEQ_STRIDE)];
      if (!log) return;
      log.events.push({ cursor: ++log.last, completion: { state: o.ok ? 'finished' : 'failed', request_id: id } });
      if (log.events.length > this.maxEvents) log.events.shift();
      for (const wake of log.waiting) wake();
    });
  }

  open(session: string): void {
    this.logs.set(session, [SessionCompletions.fresh()]);
  }

  /** A further client of `session`: its number. */
  join(session: string): number {
    const clients = this.clients(session, 'sampling_session_id');
    if (clients.length >= this.maxEvents)
      throw new HttpError(429, `sampling_session_id ${session}: ${clients.length} clients joined it already (--tinker-max-futures)`, 'too_many_clients');
    clients.push(SessionCompletions.fresh());
    return clients.length - 1;
  }

  forget(session: string): void {
    const clients = this.logs.get(session) ?? [];
    this.logs.delete(session);
    for (const log of clients) for (const wake of log.waiting) wake();
  }

  private clients(session: string, param: string): SessionLog[] {
    const clients = this.logs.get(session);
    if (!clients) throw new HttpError(404, `sampling_session_id ${session}: no such sampling session here`, 'unknown_sampling_session', param);
    return clients;
  }

  /** Client `clone`'s completions after `cursor`, waiting up to `holdMs` for one when there is none yet. */
  async poll(session: string, clone: number, cursor: number, holdMs: number, signal: AbortSignal): Promise<{ completions: Completion[]; cursor: number }> {
    const log = this.clients(session, 'target')[clone];
    if (!log)
      throw new HttpError(
        404,
        `cloned_sampler_id ${clone}: no such client of sampling session ${session} (join_sampling_session gives one)`,
        'unknown_client',
        'target',
      );
    log.events = log.events.filter((e) => e.cursor > cursor);
    if (log.events.length === 0 && holdMs > 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          log.waiting.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, holdMs);
        log.waiting.add(done);
        signal.addEventListener('abort', done);
      });
    }
    const fresh = log.events.filter((e) => e.cursor > cursor);
    return { completions: fresh.map((e) => e.completion), cursor: fresh.at(-1)?.cursor ?? Math.min(cursor, log.last) };
  }
}

export function addFuturesRoutes(app: Hono, completions: SessionCompletions): void {
  app.post('/api/v1/retrieve_futures', async (c) => {
    const body = await readJson(c, retrieveFuturesSchema);
    const hold = Math.min((body.timeout ?? MAX_HOLD_MS / 1000) * 1000, MAX_HOLD_MS);
    const { sampling_session_id: session, cloned_sampler_id: clone } = body.target;
    return c.json(await completions.poll(session, clone, body.prev_cursor, hold, c.req.raw.signal));
  });
  app.post('/api/v1/join_sampling_session', async (c) => {
    const body = await readJson(c, joinSchema);
    return c.json({ type: 'join_sampling_session', client_counter: completions.join(body.sampling_session_id) });
  });
}
