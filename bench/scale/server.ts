/**
 * The scale bench's inference server, run in its own process: an OpenAI-compatible /v1/completions
 * that answers at once with the scripted Search-R1 reply (script.ts). A prompt given as token ids is
 * decoded with the tokenizer named by `--tokenizer` (the client's); `return_token_ids` returns the
 * reply's ids, `logprobs` one log-probability per id, and without `include_stop_str_in_output` the
 * stop string is cut and named in `stop_reason`, as vLLM does. Plain node:http, so the server's own
 * cost stays small; it prints `port <n>` on stdout once listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadTranscript } from '../../src/tokens/index.ts';
import { scaleReply } from './script.ts';

const spec = process.argv[process.argv.indexOf('--tokenizer') + 1] ?? 'codepoints';
const tokenizer = (await loadTranscript(spec)).tokenizer;
const idsOf = new Map<string, number[]>();
const encode = (text: string) => {
  let ids = idsOf.get(text);
  if (!ids) idsOf.set(text, (ids = tokenizer.encode(text)));
  return ids;
};
let requests = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests++;
    if (req.url === '/requests') return void res.end(String(requests));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"bad JSON"}}');
    }
    const prompt = Array.isArray(body.prompt) ? tokenizer.decode(body.prompt as number[]) : String(body.prompt ?? '');
    const full = scaleReply(prompt);
    const stops = (body.stop as string[] | undefined) ?? [];
    const stop = stops.find((s) => full.endsWith(s));
    const text = stop && body.include_stop_str_in_output !== true ? full.slice(0, -stop.length) : full;
    const ids = encode(text);
    const choice: Record<string, unknown> = { index: 0, text, finish_reason: 'stop', stop_reason: stop ?? null };
    if (body.logprobs !== undefined && body.logprobs !== null)
      choice.logprobs = { tokens: ids.map((i) => `t${i}`), token_logprobs: ids.map(() => -0.25), top_logprobs: null, text_offset: null };
    if (body.return_token_ids === true) choice.token_ids = ids;
    const out = JSON.stringify({
      id: `cmpl-${requests}`,
      object: 'text_completion',
      created: 0,
      model: body.model,
      choices: [choice],
      usage: { prompt_tokens: 0, completion_tokens: ids.length, total_tokens: ids.length },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
