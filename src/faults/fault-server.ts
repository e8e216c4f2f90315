import type { HttpBindings } from '@hono/node-server';
import { createServerApp, errorBody, listen } from '../http/index.ts';
import { BROKEN_TOOL_CALLS, scriptedReply } from './scripted-reply.ts';
import { emptyCounts, faultFor, faultPlanSchema, SERVER_FAULT_KINDS, type FaultPlan, type FaultPlanInput, type ServerFaultKind } from './fault-plan.ts';

export interface FaultServerOptions extends FaultPlanInput {
  /**
   * Forward healthy requests to this OpenAI-compatible server and inject faults in front of it: a
   * rehearsal proxy for a real inference server. Either form works: `http://localhost:8000` or
   * `http://localhost:8000/v1` (a URL without a path gets `/v1`). Without it the server answers with
   * `script`.
   */
  upstream?: string;
  /** Called once per failed forward (unreachable upstream); the CLI prints it as one stderr line. */
  onUpstreamError?: (message: string) => void;
  /** Largest request body in bytes (default 4 MiB; `--max-body-bytes`). */
  maxBodyBytes?: number;
  /** The model's text when there is no upstream (default: a small scripted Search-R1 agent). */
  script?: (conversation: string) => string;
  /** How long a hanging request waits before giving up on its own (default 10 minutes). */
  hangMs?: number;
  /** Delay before every answer (simulates generation time). */
  delayMs?: number;
  /** Host to listen on (default 127.0.0.1) and port (default 0: an ephemeral port). */
  host?: string;
  port?: number;
}

export interface FaultServer {
  /** Base URL to give an OpenAI client, ending in /v1. */
  readonly url: string;
  readonly plan: FaultPlan;
  /** Requests seen and faults injected, by kind ('ok' = answered normally). */
  readonly counts: Readonly<Record<ServerFaultKind | 'ok', number>>;
  requests(): number;
  close(): Promise<void>;
}

type Ctx = {
  req: { json(): Promise<unknown> };
  env: HttpBindings;
  json(b: unknown, s?: number): Response;
  body(b: string, s: number, h: Record<string, string>): Response;
};

/**
 * An OpenAI-compatible server (POST /v1/completions and /v1/chat/completions) that fails a given
 * fraction of requests in one of the SERVER_FAULT_KINDS ways, for tests and for rehearsing a run's
 * failure handling before it meets a real cluster. Fault draws depend only on (seed, request number).
 */
export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const plan = faultPlanSchema.parse({ rate: options.rate, kinds: options.kinds, seed: options.seed });
  const script = options.script ?? scriptedReply;
  const hangMs = options.hangMs ?? 600_000;
  const counts = emptyCounts(SERVER_FAULT_KINDS);
  let n = 0;
  let release: () => void = () => {};
  const closing = new Promise<void>((r) => (release = r));
  const upstream = options.upstream === undefined ? undefined : upstreamBase(options.upstream);
  const app = createServerApp<{ Bindings: HttpBindings }>({
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_FAULT_BODY_BYTES,
    bodySetting: '--max-body-bytes',
    health: () => ({ requests: n }),
  });

  const handle = (path: 'chat/completions' | 'completions') => async (c: Ctx) => {
    const id = n++;
    const fault = faultFor(plan, id);
    counts[fault]++;
    const body = (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    switch (fault) {
      case 'server_error': {
        const status = [500, 502, 503][id % 3]!;
        return c.json({ error: { message: `injected fault: HTTP ${status}`, type: 'server_error' } }, status);
      }
      case 'hang': {
        // Wait until the client gives up (closes the socket), the server closes, or hangMs passes.
        const gone = new Promise<void>((r) => c.env.incoming.socket.once('close', () => r()));
        await Promise.race([gone, closing, new Promise((r) => setTimeout(r, hangMs).unref())]);
        return c.json({ error: { message: 'injected fault: hung request gave up' } }, 504);
      }
      case 'close':
        c.env.incoming.socket.destroy();
        return c.body('', 500, {});
      case 'malformed':
        return c.body('<html>502 Bad Gateway</html> not json', 200, { 'content-type': 'application/json' });
      case 'truncated': {
        const full = JSON.stringify(completion(path, id, body, 'truncated reply'));
        return c.body(full.slice(0, Math.max(1, Math.floor(full.length / 2))), 200, { 'content-type': 'application/json' });
      }
      case 'broken_tool_call':
        return c.json(completion(path, id, body, BROKEN_TOOL_CALLS[id % BROKEN_TOOL_CALLS.length]!));
      case 'ok':
        if (upstream) return forward(upstream, path, body, options.onUpstreamError);
        return c.json(completion(path, id, body, applyStop(script(conversationOf(path, body)), body)));
    }
  };
  app.post('/v1/completions', handle('completions') as never);
  app.post('/v1/chat/completions', handle('chat/completions') as never);

  const server = await listen(app, { port: options.port ?? 0, host: options.host });
  return {
    url: `${server.url}/v1`,
    plan,
    counts,
    requests: () => n,
    close: () => {
      release();
      return server.close();
    },
  };
}

export const DEFAULT_FAULT_BODY_BYTES = 4 << 20;

/** The upstream's base URL ending in `/v1`: `http://h:8000` and `http://h:8000/v1` both work. */
export function upstreamBase(url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path === '' ? '/v1' : path;
  return u.toString().replace(/\/+$/, '');
}

/** Forwards a healthy request; an unreachable upstream is a 502 JSON error (and one `onError` line). */
async function forward(upstream: string, path: string, body: Record<string, unknown>, onError?: (message: string) => void): Promise<Response> {
  const url = `${upstream}/${path}`;
  let res: globalThis.Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const message = `upstream ${url} unreachable (${cause?.code ?? cause?.message ?? (e as Error).message}); check --upstream and that the server is running`;
    onError?.(message);
    return Response.json(errorBody(502, message, 'upstream_unreachable'), { status: 502 });
  }
  return new Response(await res.text(), { status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'application/json' } });
}
function conversationOf(path: string, body: Record<string, unknown>): string {
  if (path === 'completions') return String(body.prompt ?? '');
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  return messages.map((m) => String(m.content ?? '')).join('\n');
}

/** Cuts the text at the first requested stop string, which servers strip from the output. */
function applyStop(text: string, body: Record<string, unknown>): string {
  const stops = Array.isArray(body.stop) ? (body.stop as unknown[]).map(String) : [];
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0) return text.slice(0, at) + (body.include_stop_str_in_output ? s : '');
  }
  return text;
}

function completion(path: string, id: number, body: Record<string, unknown>, text: string): Record<string, unknown> {
  const choice: Record<string, unknown> = { index: 0, finish_reason: 'stop' };
  if (path === 'completions') choice.text = text;
  else choice.message = { role: 'assistant', content: text };
  const tokens = Math.max(1, Math.ceil(text.length / 4));
  return {
    id: `fault-${id}`,
    object: path === 'completions' ? 'text_completion' : 'chat.completion',
    created: 0,
    model: String(body.model ?? 'fault-server'),
    choices: [choice],
    usage: { prompt_tokens: 0, completion_tokens: tokens, total_tokens: tokens },
  };
}
