import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

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
  private readonly ready = new Set<number>();
  private waiting: number | null = null;
  private server?: ReturnType<typeof serve>;
  private readonly options: WeightsGateOptions;

  constructor(options: WeightsGateOptions) {
    this.options = options;
    this.dir = options.dir;
  }

  /** Binds the HTTP listener when a port was given. */
  async start(): Promise<void> {
    if (this.options.port === undefined) return;
    const app = new Hono();
    app.post('/weights', async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        return c.json({ error: 'body must be JSON like {"step": 0}' }, 400);
      }
      const step = (body as { step?: unknown } | null)?.step;
      if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) return c.json({ error: 'field "step" must be a non-negative integer: the step whose batch the new weights were trained on' }, 400);
      this.ready.add(step);
      return c.json({ ok: true, step });
    });
    app.get('/status', (c) => c.json({ waiting: this.waiting, ready: [...this.ready].sort((a, b) => a - b) }));
    const host = this.options.host ?? '127.0.0.1';
    this.server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, port: this.options.port, hostname: host }, () => resolve(s));
    });
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
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
      this.ready.add(step);
    } finally {
      this.waiting = null;
    }
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      s.close(() => resolve());
    });
  }
}
