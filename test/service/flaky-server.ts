/**
 * A plain node:http OpenAI-compatible completions server whose behaviour is chosen per request: it
 * answers as the stand-in's script does, or with HTTP 500, a body that is not JSON, no answer at all
 * (a stall), or it goes down (stops listening and drops every connection). It can require an API key
 * (401 otherwise) and serves /tokenize and /detokenize (one token per code point), so a test sees
 * every request a client makes, with its headers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultScript } from '../policy/openai-stand-in.ts';

export type Behaviour = 'ok' | 'error500' | 'garbage' | 'stall' | 'down';

export interface FlakyServer {
  url: string;
  /** Completion requests seen (tokenizer calls not counted). */
  completions: number;
  /** Every request's path and Authorization header. */
  seen: Array<{ path: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

export async function startFlakyServer(
  options: {
    behaviour?: (n: number) => Behaviour;
    apiKey?: string;
    /** Per tokenizer call (/tokenize and /detokenize, counted together from 0): answer, or fail with HTTP 500. */
    tokenizer?: (n: number) => 'ok' | 'error500';
  } = {},
): Promise<FlakyServer> {
  let tokenizerCalls = 0;
  const stalled: ServerResponse[] = [];
  const state: FlakyServer = { url: '', completions: 0, seen: [], close: async () => {} };
  const server = createServer((req, res) => void handle(req, res));
  const goDown = () => {
    server.close();
    server.closeAllConnections();
  };
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = req.url ?? '';
    state.seen.push({ path, authorization: req.headers.authorization });
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    // Echoes what it was sent, as careless servers do: a client must not store or print it.
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`)
      return json(401, { error: { message: `invalid API key (got ${req.headers.authorization ?? 'none'})` } });
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    if ((path === '/tokenize' || path === '/detokenize') && options.tokenizer?.(tokenizerCalls++) === 'error500')
      return json(500, { error: { message: 'tokenizer unavailable' } });
    if (path === '/tokenize') {
      const text = String(body.prompt ?? body.content ?? '');
      return json(200, { tokens: [...text].map((ch) => ch.codePointAt(0)!) });
    }
    if (path === '/detokenize') return json(200, { prompt: String.fromCodePoint(...((body.tokens as number[]) ?? [])) });
    if (path !== '/v1/completions') return json(404, { error: { message: `no route ${path}` } });
    const n = state.completions++;
    switch (options.behaviour?.(n) ?? 'ok') {
      case 'error500':
        return json(500, { error: { message: 'internal error' } });
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices": [ {"text": "<sear');
        return;
      case 'stall':
        stalled.push(res);
        return;
      case 'down':
        goDown();
        return;
      case 'ok': {
        let text = defaultScript(String(body.prompt ?? ''));
        for (const stop of (body.stop as string[] | undefined) ?? []) {
          const at = text.indexOf(stop);
          if (at >= 0) {
            // Like vLLM: the matched stop string stays in the output only when the request asks.
            text = text.slice(0, at) + (body.include_stop_str_in_output ? stop : '');
            break;
          }
        }
        // One token per code point, as the stand-in: ids and log-probabilities when the request asks.
        const chars = [...text];
        const choice: Record<string, unknown> = { index: 0, text, finish_reason: 'stop' };
        if (body.logprobs !== undefined && body.logprobs !== null)
          choice.logprobs = { tokens: chars, token_logprobs: chars.map(() => -0.5), text_offset: chars.map((_, i) => i), top_logprobs: null };
        if (body.return_token_ids) choice.token_ids = chars.map((ch) => ch.codePointAt(0)!);
        return json(200, {
          id: `cmpl-${n}`,
          object: 'text_completion',
          created: 0,
          model: String(body.model),
          choices: [choice],
          usage: { prompt_tokens: 1, completion_tokens: chars.length, total_tokens: 1 + chars.length },
        });
      }
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const r of stalled) r.destroy();
      server.closeAllConnections();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return state;
}
