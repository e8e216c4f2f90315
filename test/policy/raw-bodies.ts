/**
 * For the tests that check the exact text a policy sends (completions and token mode write their
 * bodies as text, without a body object): a plain node:http server that keeps each request body's raw
 * text, and the option combinations a request's fields depend on.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const ONE_TURN = JSON.stringify({ choices: [{ text: '<answer>1900</answer>', finish_reason: 'stop' }] });

/** Listens on a free port; answers one turn, or what `refuse` returns for a body it refuses (HTTP 400). */
export async function rawBodyServer(
  refuse: (text: string) => string | undefined = () => undefined,
): Promise<{ url: string; raw: string[]; close(): Promise<void> }> {
  const raw: string[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      raw.push(text);
      const refusal = refuse(text);
      res.writeHead(refusal === undefined ? 200 : 400, { 'content-type': 'application/json' });
      res.end(refusal ?? ONE_TURN);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    raw,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The policy options a request's fields depend on, each with the defaults around it. */
export const REQUEST_VARIANTS = [
  {},
  { topK: 20 },
  { seed: false },
  { logprobs: false },
  { extras: 'vllm' as const },
  { logprobs: false, seed: false, topP: 0.9, temperature: 0.7 },
];
