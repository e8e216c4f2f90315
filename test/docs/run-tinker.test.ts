// docs/tinker.md's CPU example, line by line as written in one workspace (test/docs/doc-shell.ts): the
// key file, `trace-rl serve --tinker` in the background, the wait for it, and `train --policy tinker`
// against it. Changed: the port (a free one for the doc's 8080) and, appended to train, one step of 8
// trajectories on 8 prompts with 10 held-out questions.
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
]);
