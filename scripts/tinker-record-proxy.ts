/**
 * A recording proxy for the Tinker wire: passes every request to TARGET and appends what crossed the
 * wire (method, path, the headers that say how a body is encoded, both bodies as base64, the status)
 * to OUT as JSON lines. Used by scripts/tinker-sdk-run.sh to keep what the official SDK sent and
 * received as test vectors.
 *
 *   node --import tsx scripts/tinker-record-proxy.ts TARGET PORT OUT.jsonl
 */
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';

const [target, port, out] = process.argv.slice(2);
if (!target || !port || !out) throw new Error('usage: tinker-record-proxy.ts TARGET PORT OUT.jsonl');

const KEPT = ['content-type', 'content-encoding', 'accept'];
function kept(get: (name: string) => string | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of KEPT) {
    const v = get(k);
    if (v != null) out[k] = v;
  }
  return out;
}

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
  const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
  const bytes = Buffer.from(await answer.arrayBuffer());
  appendFileSync(
    out,
    `${JSON.stringify({
      method: req.method,
      path: req.url,
      request: { headers: kept((k) => req.headers[k] as string | undefined), body: body.toString('base64') },
      status: answer.status,
      response: { headers: kept((k) => answer.headers.get(k)), body: bytes.toString('base64') },
    })}\n`,
  );
  const type = answer.headers.get('content-type');
  res.writeHead(answer.status, type ? { 'content-type': type } : {}).end(bytes);
});
server.listen(Number(port), '127.0.0.1', () => process.stderr.write(`recording ${target} at http://127.0.0.1:${port} into ${out}\n`));
