import { boundedFetch, ResponseTooLargeError } from '../policy/openai/bounded-fetch.ts';
import { sleep } from '../util/sleep.ts';
import { sequencesIn, type ScoredGroup } from './atropos-groups.ts';

/**
 * A rollout handler ("environment") of the Atropos trajectory API (docs/atropos.md has the protocol
 * and where each fact comes from). The order is the API's: the trainer registers (`POST /register`)
 * and asks for a batch once; only then does `POST /register-env` succeed, and only data pushed after
 * the trainer's registration is served (data that arrives first leaves the trainer's state
 * uninitialised). So `register` waits for both before anything is pushed.
 */
export interface AtroposClientOptions {
  /** The API's base URL, e.g. http://localhost:8000. */
  url: string;
  /** Sent as `Authorization: Bearer …` when the API sits behind an authenticating proxy. */
  apiKey?: string;
  /** Name this handler registers under (the API appends `_<n>`). */
  name?: string;
  /** Attempts per request on a connection failure, 408, 429 or 5xx (default 5). */
  attempts?: number;
  /** First retry delay; doubles per attempt up to 8 s (default 500 ms). */
  baseDelayMs?: number;
  /** Longest one request may take (default 60 s). */
  timeoutMs?: number;
  /** How often to ask the API while waiting for the trainer (default 1 s). */
  pollMs?: number;
  /** Largest request body: a step's groups are sent as several `/scored_data_list` calls below it (default 8 MiB). */
  maxRequestBytes?: number;
  /** Largest answer read back (default 1 MiB: every answer a rollout handler gets is a small JSON object). */
  maxResponseBytes?: number;
  /** Told once when a wait starts and every minute while it lasts. */
  onWait?: (message: string) => void;
  fetch?: typeof fetch;
}

/** The API refused, or could not be reached after the retries; the message names the URL and the cause. */
export class AtroposError extends Error {
  override name = 'AtroposError';
}

/** What the API said at registration. */
export interface AtroposRegistration {
  envId: number;
  wandbName: string;
  /** Sequences per trainer batch (`/info`'s batch_size). */
  batchSize: number;
  /** The trainer's longest sequence in tokens (`/info`'s max_token_len). */
  maxTokenLen: number;
  /** The API's step counter when this handler registered. */
  startingStep: number;
  /** The trainer's registered number of steps (`/register-env`'s num_steps; ≤ 0 when it gave none): it asks for no batch past it. */
  numSteps: number;
}

/** The wait after a push ended: the trainer took the sequences, or it has taken every batch it registered for. */
export interface AtroposTaken {
  outstanding: number;
  /** The API's step counter (batches formed for the trainer). */
  step: number;
  /** True when the counter reached the trainer's num_steps: it asks for no more batches, so nothing pushed later is trained. */
  trainerFinished: boolean;
  trainerSteps: number;
}

export interface AtroposPush {
  groups: number;
  sequences: number;
  requests: number;
  /** Sequences longer than the trainer's max_token_len (the trainer truncates or drops them). */
  overLength: number;
}

const MAX_DELAY_MS = 8000;
const WAIT_REPORT_MS = 60_000;

export class AtroposClient {
  readonly url: string;
  private registration?: AtroposRegistration;
  /** Sequences pushed since registration; with the API's step counter, what the trainer has not yet taken. */
  private pushed = 0;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: AtroposClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.fetch = boundedFetch(options.maxResponseBytes ?? 1 << 20, options.fetch ?? fetch);
  }

  get registered(): AtroposRegistration | undefined {
    return this.registration;
  }

  /**
   * Waits until the trainer has registered (`/info` gives a batch size) and started (`/register-env`
   * stops answering "wait for trainer to start"), then registers this handler with group size 1.
   */
  async register(signal?: AbortSignal): Promise<AtroposRegistration> {
    const info = await this.poll(
      async () => {
        const i = asRecord(await this.call('GET', '/info', undefined, signal), '/info');
        return num(i.batch_size) > 0 ? i : undefined;
      },
      'for a trainer to register (POST /register)',
      signal,
    );
    const batchSize = num(info.batch_size);
    const maxTokenLen = num(info.max_token_len);
    const env = await this.poll(
      async () => {
        const r = asRecord(
          await this.call(
            'POST',
            '/register-env',
            { max_token_length: Math.max(1, maxTokenLen), desired_name: this.options.name ?? 'trace-rl', weight: 1.0, group_size: 1 },
            signal,
          ),
          '/register-env',
        );
        if (r.status === 'success') return r;
        if (r.status === 'wait for trainer to start') return undefined;
        throw new AtroposError(`${this.url}/register-env answered ${JSON.stringify(r).slice(0, 300)}`);
      },
      'for the trainer to start (its first GET /batch)',
      signal,
    );
    if (!Number.isInteger(env.env_id)) throw new AtroposError(`${this.url}/register-env answered no env_id: ${JSON.stringify(env).slice(0, 300)}`);
    this.registration = {
      envId: env.env_id as number,
      wandbName: String(env.wandb_name ?? ''),
      batchSize,
      maxTokenLen,
      startingStep: num(env.starting_step),
      numSteps: num(env.num_steps),
    };
    return this.registration;
  }

  /**
   * Sends groups with `/scored_data_list`, as few requests as the body limit allows. A group of one
   * sequence carries this handler's env id; larger ones do not, since the API holds back a group of
   * another size than the registered one until buffered groups add up to that size.
   */
  async push(groups: readonly ScoredGroup[], signal?: AbortSignal, onAcknowledged?: (groups: number) => void): Promise<AtroposPush> {
    const reg = this.registration;
    if (!reg) throw new AtroposError('register with the Atropos API before pushing groups');
    const limit = this.options.maxRequestBytes ?? 8 << 20;
    let requests = 0;
    let acknowledged = 0;
    let part: string[] = [];
    let bytes = 2;
    const flush = async () => {
      if (part.length === 0) return;
      const body = `[${part.join(',')}]`;
      const r = asRecord(await this.call('POST', '/scored_data_list', body, signal), '/scored_data_list');
      if (r.status !== 'received' || r.groups_processed !== part.length)
        throw new AtroposError(`${this.url}/scored_data_list: sent ${part.length} groups, answered ${JSON.stringify(r).slice(0, 300)}`);
      requests++;
      // Said after every request, so a run stopped between requests knows which groups the API holds.
      acknowledged += part.length;
      onAcknowledged?.(acknowledged);
      part = [];
      bytes = 2;
    };
    let overLength = 0;
    for (const g of groups) {
      const tagged = g.tokens.length === 1 ? { ...g, env_id: reg.envId } : g;
      const text = JSON.stringify(tagged);
      if (part.length > 0 && bytes + text.length + 1 > limit) await flush();
      part.push(text);
      bytes += text.length + 1;
      for (const t of g.tokens) if (reg.maxTokenLen > 0 && t.length > reg.maxTokenLen) overLength++;
    }
    await flush();
    const sequences = sequencesIn(groups);
    this.pushed += sequences;
    return { groups: groups.length, sequences, requests, overLength };
  }

  /**
   * Waits until fewer than one trainer batch of this handler's sequences is still queued: the
   * trainer has taken (formed into batches) the rest, so the next rollouts start while it trains.
   * Counted from the API's step counter, which advances by one per batch of `batch_size` sequences.
   */
  async waitUntilTaken(signal?: AbortSignal): Promise<AtroposTaken> {
    const reg = this.registration;
    if (!reg) throw new AtroposError('register with the Atropos API before waiting on it');
    return this.poll(
      async () => {
        const s = asRecord(await this.call('GET', '/status', undefined, signal), '/status');
        const step = num(s.current_step);
        // The counter never goes back while the trainer lives: a lower one is an API restarted or reset (GET /reset_data).
        if (step < reg.startingStep)
          throw new AtroposError(
            `${this.url}/status: the API's step counter went back from ${reg.startingStep} to ${step}: the API was restarted or reset, and the trainer that registered is gone; start the trainer again`,
          );
        const trainerFinished = reg.numSteps > 0 && step >= reg.numSteps;
        const outstanding = Math.max(0, this.pushed - (step - reg.startingStep) * reg.batchSize);
        return trainerFinished || outstanding < reg.batchSize || num(s.queue_size) === 0
          ? { outstanding, step, trainerFinished, trainerSteps: reg.numSteps }
          : undefined;
      },
      `for the trainer to take the queued sequences (GET ${this.url}/batch; batch_size ${reg.batchSize})`,
      signal,
    );
  }

  /** Tells the API this handler is gone (best effort: the run is over either way). */
  async disconnect(): Promise<void> {
    if (!this.registration) return;
    await this.call('POST', '/disconnect-env', { env_id: this.registration.envId }, AbortSignal.timeout(5000), 1).catch(() => {});
  }

  /** Calls `attempt` every pollMs until it gives a value; tells onWait when it has to wait, and every minute after. */
  private async poll<T>(attempt: () => Promise<T | undefined>, what: string, signal?: AbortSignal): Promise<T> {
    const started = Date.now();
    let told = -Infinity;
    for (;;) {
      const v = await attempt();
      if (v !== undefined) return v;
      if (Date.now() - told >= WAIT_REPORT_MS) {
        const s = Math.round((Date.now() - started) / 1000);
        this.options.onWait?.(`waiting at ${this.url} ${what}${s > 0 ? ` for ${s} s` : ''}`);
        told = Date.now();
      }
      await sleep(this.options.pollMs ?? 1000, signal);
    }
  }

  /** One request with bounded retries; the parsed JSON answer. */
  private async call(method: 'GET' | 'POST', path: string, body: unknown, signal?: AbortSignal, attempts = this.options.attempts ?? 5): Promise<unknown> {
    const url = `${this.url}${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    let failure = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(Math.min(MAX_DELAY_MS, (this.options.baseDelayMs ?? 500) * 2 ** (attempt - 2)), signal);
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 60_000);
      let res: Response;
      try {
        res = await this.fetch(url, { method, headers, body: text, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (e instanceof ResponseTooLargeError) throw new AtroposError(`${method} ${url}: ${e.message}`);
        failure = `connection failed: ${causeOf(e)}`;
        continue;
      }
      let answer: string;
      try {
        answer = await res.text();
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (e instanceof ResponseTooLargeError) throw new AtroposError(`${method} ${url}: ${e.message}`);
        failure = `reading the answer failed: ${causeOf(e)}`;
        continue;
      }
      if (res.ok) {
        try {
          return JSON.parse(answer) as unknown;
        } catch {
          throw new AtroposError(`${method} ${url}: the answer is not JSON: ${clip(answer)}`);
        }
      }
      failure = `HTTP ${res.status}: ${clip(answer)}`;
      const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
      if (!retryable) break;
    }
    const key = /HTTP 40[13]/.test(failure) ? ' (the API refused the key: set TRACE_RL_ATROPOS_API_KEY or --atropos-api-key-file)' : '';
    throw new AtroposError(`${method} ${url}: ${failure}${key}`);
  }
}

function asRecord(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AtroposError(`${path} answered ${clip(JSON.stringify(v))}, not an object`);
  return v as Record<string, unknown>;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : -1;
}

function clip(s: string | undefined): string {
  const t = String(s ?? '');
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

function causeOf(e: unknown): string {
  let c: unknown = e;
  for (let depth = 0; depth < 5 && c instanceof Error; depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (!(c as { cause?: unknown }).cause) return c.message;
    c = (c as { cause?: unknown }).cause;
  }
  return String(c);
}
