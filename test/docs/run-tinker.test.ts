// docs/tinker.md's CPU example, line by line as written in one workspace (test/docs/doc-shell.ts): the
// key file, `trace-rl serve --tinker` in the background, the wait for it, and `train --policy tinker`
// against it, then `diagnose --policy tinker` on the same engine. Changed: the port (a free one for the
// doc's 8080); appended to train, one step of 8 trajectories on 8 prompts with 10 held-out questions; to
// diagnose, 2 prompts of k = 2.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { docTests, DocWorkspace, freePort, rewrite, withFlags } from './doc-shell.ts';

const ws = new DocWorkspace('tinker');
const port = await freePort();
const at = (text: string) => rewrite(text, [['8080', String(port)]]);

docTests('test/docs/run-tinker.test.ts', [
  [
    'echo "tml-$(openssl rand -hex 16)" > key.txt',
    async (s) => {
      await ws.ok(s.place, s.text);
      assert.match(readFileSync(ws.path('key.txt'), 'utf8'), /^tml-[0-9a-f]{32}\n$/);
    },
  ],
  [
    'npx trace-rl serve --model bench/tinylm/warm-start.gguf --port 8080 --tinker --tinker-key-file key.txt &',
    async (s) => {
      // The block's `&`: the server keeps running for the lines below (stopped with the workspace).
      const server = ws.start(at(s.text).replace(/\s*&$/, ''));
      await ws.waitFor(server, new RegExp(`127\\.0\\.0\\.1:${port}`));
    },
  ],
  ['until curl -sf http://127.0.0.1:8080/health > /dev/null; do sleep 1; done', async (s) => ws.ok(s.place, at(s.text), 60_000)],
  [
    'TINKER_API_KEY=$(head -1 key.txt) npx trace-rl train --policy tinker --base-url http://127.0.0.1:8080 --set policy.model=warm-start --set policy.prompt=question --set policy.maxTokensPerTurn=64 --set policy.learningRate=0.003',
    async (s) => {
      const r = await ws.ok(s.place, withFlags(at(s.text), '--steps 1 --budget 8 --pool 8 --set eval.questions=10'), 240_000);
      assert.match(r.stdout, /finished 1 step\(s\) in /);
    },
  ],
  [
    'npx trace-rl diagnose --env world --policy tinker --base-url http://127.0.0.1:8080 --model warm-start --api-key-file key.txt --set policy.prompt=question --set policy.maxTokensPerTurn=64 --html diagnose.html',
    async (s) => {
      const r = await ws.ok(s.place, withFlags(at(s.text), '--prompts 2 --k 2'), 240_000);
      // The engine's own prefix-cache count, beside the tokens the trees share (docs/tinker.md says so).
      assert.match(r.stdout, /prompt tokens sent to the engine: [1-9]\d*; in the trees' shared prefixes: \d+/);
      assert.match(readFileSync(ws.path('diagnose.html'), 'utf8'), /id="prompt-cache"/);
    },
  ],
]);
