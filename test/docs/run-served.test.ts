// The documented commands that talk to a model server, against the one the docs say to start:
// `trace-rl serve` with the project's warm-started tiny LM (docs/tinylm.md), started once, as written
// but on a free port, and used for every command that names a server (vLLM / SGLang at localhost:8000,
// gpu1 and gpu2): only the URL changes. In one workspace (test/docs/doc-shell.ts); appended: one step,
// a few prompts or questions.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { docTests, DocWorkspace, freePort, rewrite, withFlags, type Background } from './doc-shell.ts';

const ws = new DocWorkspace('served');
let server: { bg: Background; url: string } | undefined;
let retrieverPort = 0;
const engine = () => {
  assert.ok(server, 'the server (docs/tinylm.md: trace-rl serve) did not start');
  return server;
};

/** POST /v1/completions through `base` (a server's /v1 URL). */
const complete = (base: string) =>
  fetch(`${base}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'warm-start', prompt: 'Question: who?', max_tokens: 8 }),
    // The fault server's `hang` holds a request open: the client's own timeout ends it.
    signal: AbortSignal.timeout(5_000),
  });

docTests('test/docs/run-served.test.ts', [
  [
    'npx trace-rl serve --model bench/tinylm/warm-start.gguf --port 8080',
    async (s) => {
      const bg = ws.start(rewrite(s.text, [['--port 8080', '--port 0']]));
      const url = (await ws.waitFor(bg, /at (http:\/\/127\.0\.0\.1:\d+\/v1)/))[1]!;
      server = { bg, url };
      const r = await complete(url);
      const body = await r.text();
      assert.equal(r.status, 200, body);
      assert.equal((JSON.parse(body) as { choices: unknown[] }).choices.length, 1);
    },
  ],
  [
    'npx trace-rl faults serve --rate 0.2 --upstream http://127.0.0.1:8000',
    async (s) => {
      const upstream = engine().url.replace(/\/v1$/, '');
      const bg = ws.start(withFlags(rewrite(s.text, [['http://127.0.0.1:8000', upstream]]), '--port 0'));
      const url = (await ws.waitFor(bg, /(http:\/\/127\.0\.0\.1:\d+)/))[1]!;
      // A fifth of the requests fail (seeded); the rest reach the tiny LM.
      const statuses = [];
      for (let i = 0; i < 10; i++)
        statuses.push(
          await complete(`${url}/v1`).then(
            (r) => r.status,
            (e: Error) => e.name,
          ),
        );
      assert.ok(statuses.includes(200), `no request went through: ${statuses}`);
      await bg.stop();
    },
  ],
  [
    'trace-rl diagnose --env qa --datasets hotpotqa --policy openai --base-url http://localhost:8000/v1 --html diagnose.html',
    async (s) => {
      await ws.ok(s.place, withFlags(rewrite(s.text, [['http://localhost:8000/v1', engine().url]]), '--prompts 2 --k 2 --max-tokens 32'));
      assert.ok(existsSync(ws.path('diagnose.html')));
    },
  ],
  [
    'npx trace-rl retriever serve --dataset hotpotqa --port 8001 &',
    async (s) => {
      retrieverPort = await freePort();
      // The block's `&`: it keeps serving for the rollout below.
      const bg = ws.start(rewrite(s.text, [['--port 8001', `--port ${retrieverPort}`]]).replace(/\s*&$/, ''));
      await ws.waitFor(bg, new RegExp(`127\\.0\\.0\\.1:${retrieverPort}`));
    },
  ],
  [
    'npx trace-rl rollout --policy openai --base-url http://gpu1:8000/v1 --base-url http://gpu2:8000/v1 --env qa --datasets hotpotqa,2wiki:eval,musique:eval,bamboogle:eval --retrieval url --retriever-url http://127.0.0.1:8001 --steps 200 --out runs/qa-rollout',
    async (s) => {
      const shell = rewrite(s.text, [
        ['http://gpu1:8000/v1', engine().url],
        ['http://gpu2:8000/v1', engine().url],
        ['http://127.0.0.1:8001', `http://127.0.0.1:${retrieverPort}`],
      ]);
      await ws.ok(s.place, withFlags(shell, '--steps 1 --budget 8 --pool 4 --set engine.maxTokensPerTurn=32'));
      assert.ok(existsSync(ws.path('runs/qa-rollout/run.sqlite')));
    },
  ],
  [
    'npx trace-rl eval --policy openai --base-url http://localhost:8000/v1 --model Qwen/Qwen3-8B --env qa --datasets hotpotqa,2wiki,musique,bamboogle --retrieval pooled --split all --out runs/eval-qwen',
    async (s) => {
      const r = await ws.ok(s.place, withFlags(rewrite(s.text, [['http://localhost:8000/v1', engine().url]]), '--questions 2 --max-tokens 32'));
      for (const name of ['hotpotqa', '2wiki', 'musique', 'bamboogle']) assert.match(r.stdout, new RegExp(`^${name} +2 `, 'm'));
    },
  ],
]);
