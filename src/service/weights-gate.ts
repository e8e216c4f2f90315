import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { controlGuard, controlToken, createServerApp, HttpError, listen, readJson, type RunningServer } from '../http/index.ts';
import { redactSecret } from '../util/redact.ts';

const STEP_MESSAGE = 'must be a non-negative integer: the step whose batch the new weights were trained on';
/** `{"step": N, "model"?: FILE}`: the trainer has pushed the weights trained on batch N (as FILE, a GGUF, for a server that reloads). */
const announcement = z.object({
  step: z.number({ error: STEP_MESSAGE }).int({ error: STEP_MESSAGE }).min(0, { error: STEP_MESSAGE }),
  model: z.string({ error: 'must be a path to the new weights (GGUF)' }).optional(),
});

/** A step announcement is a few bytes; anything larger is refused before it is read. */
const GATE_BODY_BYTES = 4096;

/** File the trainer creates after pushing the weights trained on batch `step`. */
export function weightsReadyFile(dir: string, step: number): string {
  return join(dir, `weights-step-${step}.ready`);
}

export interface WeightsGateOptions {
  /** Folder watched for `weights-step-<N>.ready`. */
  dir: string;
  /** Also listen for `POST /weights {"step": N}` on this port (0 = any free port); no HTTP when absent. */
  port?: number;
  /** Host for the HTTP listener (default 127.0.0.1). */
  host?: string;
  /** How often the folder is checked (default 100 ms). */
  pollMs?: number;
  /**
   * Called with a `/weights` body's `model` (a new GGUF path) before the step is released, e.g. to
   * POST it to `trace-rl serve --allow-reload` at `<url>/reload`; the trainer's POST answers after it.
   */
  reload?: (model: string) => Promise<void>;
  /** The token `POST /weights` must carry (`Authorization: Bearer`); a new random one when absent (read it from `token`). */
  token?: string;
  /** Host names accepted besides the loopback ones and the bound address (`--allow-host`). */
  allowHosts?: readonly string[];
}

/** Raised when a wait for the trainer's weights is abandoned (the service was stopped). */
export class WeightsWaitAborted extends Error {
  override name = 'WeightsWaitAborted';
}

/**
 * Where the rollout service learns that the trainer has pushed new weights into the inference server:
 * either a file `<dir>/weights-step-N.ready` appears, or an HTTP `POST /weights` with `{"step": N}`
 * arrives. `GET /status` answers `{"waiting": N | null, "ready": [...]}`.
 */
export class WeightsGate {
  readonly dir: string;
  /** Set once `start()` has bound the HTTP listener. */
  url?: string;
  /** What `POST /weights` must send as `Authorization: Bearer <token>` (given, or generated). */
  readonly token: string;
  /** True when the token was generated here (the caller prints it once). */
  readonly generatedToken: boolean;
  private readonly ready = new Set<number>();
  private waiting: number | null = null;
  /** The step whose batch is written and whose wait comes next (set by `expect`, cleared once it is passed). */
  private next: number | null = null;
  private server?: RunningServer;
  private readonly options: WeightsGateOptions;

  constructor(options: WeightsGateOptions) {
    this.options = options;
    this.dir = options.dir;
    const t = options.token === undefined ? controlToken() : { token: options.token, generated: false };
    this.token = t.token;
    this.generatedToken = t.generated;
  }

  /** Binds the HTTP listener when a port was given. */
  async start(): Promise<void> {
    if (this.options.port === undefined) return;
    const app = createServerApp({ maxBodyBytes: GATE_BODY_BYTES, bodySetting: 'fixed: a step announcement is {"step": N, "model"?: FILE}' });
    const host = this.options.host ?? '127.0.0.1';
    app.post('/weights', controlGuard({ token: this.token, boundHost: host, hosts: this.options.allowHosts ?? [] }), async (c) => {
      const { step, model } = await readJson(c, announcement);
      const refused = this.refusal(step);
      if (refused) throw new HttpError(409, refused, 'step_not_awaited', 'step');
      let reloaded = false;
      if (model !== undefined && this.options.reload) {
        try {
          await this.options.reload(model);
          reloaded = true;
        } catch (e) {
          throw new HttpError(502, `reloading ${model} failed: ${redactSecret((e as Error).message, this.token)}`, 'reload_failed', 'model');
        }
      }
      this.ready.add(step);
      return c.json({ ok: true, step, reloaded });
    });
    app.get('/status', (c) => c.json({ waiting: this.waiting, ready: [...this.ready].sort((a, b) => a - b) }));
    this.server = await listen(app, { port: this.options.port, host });
    this.url = this.server.url;
  }

  /** The service has written (or is writing) the batch of `step` and will wait for its weights next. */
  expect(step: number): void {
    this.next = step;
  }

  /**
   * Why `POST /weights` for `step` is refused; undefined when it is accepted: only the step the service
   * waits for, or whose batch it has written and will wait for next. Weights cannot have been trained on
   * a batch that is not written yet, so an announcement ahead of it would let the service skip its wait
   * for the trainer (a holder of the token ran four steps with no trainer attached). A trainer announces
   * the step of the `waiting` event it was sent, which is always this one.
   */
  private refusal(step: number): string | undefined {
    const awaited = this.waiting ?? this.next;
    if (step === awaited) return undefined;
    const now =
      awaited === null
        ? 'is rolling out and waits for no weights yet'
        : this.waiting === null
          ? `will wait next for the weights of step ${awaited}`
          : `is waiting for the weights of step ${awaited}`;
    return `step ${step} is not awaited: the service ${now}; announce a step once the trainer has trained on its batch and loaded the new weights`;
  }

  /** Marks a step as ready (what the HTTP endpoint does). */
  signal(step: number): void {
    this.ready.add(step);
  }

  /** Resolves once the weights trained on batch `step` are announced (file or HTTP). */
  async wait(step: number, abort?: AbortSignal): Promise<void> {
    const file = weightsReadyFile(this.dir, step);
    this.waiting = step;
    try {
      while (!this.ready.has(step) && !existsSync(file)) {
        if (abort?.aborted) throw new WeightsWaitAborted(`stopped while waiting for the weights of step ${step}`);
        try {
          await sleep(this.options.pollMs ?? 100, undefined, { signal: abort });
        } catch {
          throw new WeightsWaitAborted(`stopped while waiting for the weights of step ${step}`);
        }
      }
      // Announcements of steps already passed are of no further use: the set holds only what is ahead.
      for (const s of this.ready) if (s < step) this.ready.delete(s);
      this.ready.add(step);
      this.next = null;
    } finally {
      this.waiting = null;
    }
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await s.close();
  }
}
