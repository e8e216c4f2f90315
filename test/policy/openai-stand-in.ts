/**
 * A real HTTP server that speaks the OpenAI completions and chat formats with a deterministic scripted
 * behaviour and injectable failures. It stands in for an inference server (vLLM, llama.cpp) in tests
 * and benchmarks until the tiny-LM issue brings a llama.cpp server to run against.
 *
 * Script (default): turn 0 searches the first capitalised name of the question; later turns answer
 * the first year in the latest <information> block, or its first document title. Like real servers it
 * strips the matched stop string unless the request sets include_stop_str_in_output, and returns
 * per-token logprobs / token ids (one token per character, id = char code) when asked.
 */
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';

export type Fault = 'ok' | 'error500' | 'error400' | 'hang' | 'malformed' | 'no_choices';

export interface StandInOptions {
  /** Fixed delay before answering (benchmarks). */
  delayMs?: number;
  /** Decide a fault per request (n counts requests from 0 across both endpoints). */
  fault?: (n: number, body: Record<string, unknown>) => Fault;
  /** Cut the matched stop string even when include_stop_str_in_output asks to keep it (servers that ignore it). */
  cutsStop?: boolean;
  /** Replace the scripted reply: the text the model "writes" before stop-string handling. */
  script?: (conversation: string) => string;
}

export interface StandIn {
  url: string;
  requests: number;
  inFlight: number;
  peakInFlight: number;
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export function defaultScript(conversation: string): string {
  // Only what follows the question counts: instructions may mention the tags themselves.
  const q = conversation.lastIndexOf('Question:');
  const dialogue = q >= 0 ? conversation.slice(q) : conversation;
  const blocks = dialogue.split('<information>');
  const question = /Question:\s*([^\n]*)/.exec(dialogue)?.[1] ?? dialogue;
  if (blocks.length === 1) {
    const name = /[A-Z][a-z]+(?: [A-Z][a-z]+)*/.exec(question.replace(/^\s*\w+/, ''))?.[0] ?? 'nothing';
    return `<think>I should look up ${name}.</think>\n<search>${name}</search>`;
  }
  const last = blocks.at(-1)!.split('</information>')[0]!;
  const answer = /\b(1[0-9]{3}|20[0-9]{2})\b/.exec(last)?.[1] ?? /Title: "([^"]*)"/.exec(last)?.[1] ?? 'unknown';
  return `<think>The passage says ${answer}.</think>\n<answer>${answer}</answer>`;
}

export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const script = options.script ?? defaultScript;
  let release: () => void = () => {};
  const closed = new Promise<void>((r) => (release = r));
  const state: StandIn = { url: '', requests: 0, inFlight: 0, peakInFlight: 0, bodies: [], close: async () => {} };
  const app = new Hono();

  const handle =
    (mode: 'chat' | 'completions') =>
    async (c: {
      req: { json(): Promise<unknown> };
      json(b: unknown, s?: number): Response;
      body(b: string, s: number, h: Record<string, string>): Response;
    }) => {
      const n = state.requests++;
      state.inFlight++;
      state.peakInFlight = Math.max(state.peakInFlight, state.inFlight);
      try {
        const body = (await c.req.json()) as Record<string, unknown>;
        state.bodies.push(body);
        const fault = options.fault?.(n, body) ?? 'ok';
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        if (fault === 'hang') {
          // The timer is cleared once the server closes: a pending one kept the test process alive 30 s.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
          clearTimeout(timer);
          return c.json({ error: { message: 'gave up' } }, 504);
        }
        if (fault === 'error500') return c.json({ error: { message: 'injected internal error' } }, 500);
        if (fault === 'error400') return c.json({ error: { message: 'injected bad request' } }, 400);
        if (fault === 'malformed') return c.body('{"choices": [ {"text": "<sear', 200, { 'content-type': 'application/json' });
        if (fault === 'no_choices') return c.json({ id: 'x', object: 'text_completion', choices: [] });
        const conversation =
          mode === 'chat'
            ? ((body.messages as Array<{ content: string }>) ?? []).map((m) => m.content).join('\n')
            : Array.isArray(body.prompt)
              ? String.fromCodePoint(...(body.prompt as number[])) // a token-id prompt: ids are code points here
              : String(body.prompt ?? '');
        let text = script(conversation);
        const stops = (body.stop as string[] | undefined) ?? [];
        let stopReason: string | null = null;
        for (const s of stops) {
          const at = text.indexOf(s);
          if (at >= 0) {
            text = text.slice(0, at) + (body.include_stop_str_in_output && !options.cutsStop ? s : '');
            stopReason = s;
            break;
          }
        }
        const maxTokens = Number(body.max_tokens ?? 1e9);
        const finish = [...text].length > maxTokens ? 'length' : 'stop';
        if (finish === 'length') text = [...text].slice(0, maxTokens).join('');
        const chars = [...text];
        const ids = chars.map((ch) => ch.codePointAt(0)!);
        const lps = chars.map((_, i) => -0.1 * ((i % 3) + 1));
        const choice: Record<string, unknown> = { index: 0, finish_reason: finish, stop_reason: stopReason };
        if (mode === 'chat') {
          choice.message = { role: 'assistant', content: text };
          if (body.logprobs)
            choice.logprobs = {
              content: chars.map((ch, i) => ({ token: body.return_tokens_as_token_ids ? `token_id:${ids[i]}` : ch, logprob: lps[i], top_logprobs: [] })),
            };
        } else {
          choice.text = text;
          if (body.logprobs !== undefined && body.logprobs !== null)
            choice.logprobs = { tokens: chars, token_logprobs: lps, text_offset: chars.map((_, i) => i), top_logprobs: null };
        }
        if (body.return_token_ids) choice.token_ids = ids;
        return c.json({
          id: `cmpl-${n}`,
          object: mode === 'chat' ? 'chat.completion' : 'text_completion',
          created: 0,
          model: String(body.model),
          choices: [choice],
          usage: { prompt_tokens: conversation.length, completion_tokens: chars.length, total_tokens: conversation.length + chars.length },
        });
      } finally {
        state.inFlight--;
      }
    };
  app.post('/v1/chat/completions', handle('chat') as never);
  app.post('/v1/completions', handle('completions') as never);

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      release();
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => resolve());
    });
  return state;
}
