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
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { HttpError, readJson } from '../../http/index.ts';

/** The longest a poll is held (the SDK's client waits 45 s for an answer). */
const MAX_HOLD_MS = 30_000;

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
 * The completions of each sampling session's requests, in order. At most `maxEvents` unseen ones are
 * kept per session (the oldest go first: a client that never polls cannot grow it), and logs follow the
 * sampling sessions the routes keep (`forget` when one is dropped).
 */
export class SessionCompletions {
  private readonly logs = new Map<string, SessionLog>();

  constructor(private readonly maxEvents: number) {}

  private log(session: string): SessionLog {
    let log = this.logs.get(session);
    if (!log) this.logs.set(session, (log = { events: [], last: 0, waiting: new Set() }));
    return log;
  }

  /** Records request `id` of `session` as complete once `outcome` settles. */
  follow(session: string, id: string, outcome: Promise<{ ok: boolean }>): void {
    void outcome.then((o) => {
      const log = this.logs.get(session);
      if (!log) return;
      log.events.push({ cursor: ++log.last, completion: { state: o.ok ? 'finished' : 'failed', request_id: id } });
      if (log.events.length > this.maxEvents) log.events.shift();
      for (const wake of log.waiting) wake();
    });
  }

  open(session: string): void {
    this.log(session);
  }

  forget(session: string): void {
    const log = this.logs.get(session);
    this.logs.delete(session);
    for (const wake of log?.waiting ?? []) wake();
  }

  /** The completions after `cursor`, waiting up to `holdMs` for one when there is none yet. */
  async poll(session: string, cursor: number, holdMs: number, signal: AbortSignal): Promise<{ completions: Completion[]; cursor: number }> {
    const log = this.logs.get(session);
    if (!log) throw new HttpError(404, `sampling_session_id ${session}: no such sampling session here`, 'unknown_sampling_session', 'target');
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
    return c.json(await completions.poll(body.target.sampling_session_id, body.prev_cursor, hold, c.req.raw.signal));
  });
}
