// The documented commands of docs/environments.md "Your environment as a server", run as written in a
// workspace (test/docs/doc-shell.ts): the page's thirty-line Python server (its python block, written
// to guess.py as the page says) and `trace-rl env serve`, each on a free port, and the trainings on
// them with fewer steps appended (sizes only). Each run must finish with continuations restored by
// replay and no mismatch.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { docTests, DocWorkspace, freePort, rewrite, withFlags, type Background } from './doc-shell.ts';
import { ROOT } from './shell-commands.ts';

const ws = new DocWorkspace('remote');
const ports = new Map<string, number>();

/** The page's Python server, from its python block. */
function guessPy(): string {
  const page = readFileSync(join(ROOT, 'docs/environments.md'), 'utf8');
  const start = page.indexOf('# guess.py: python3 guess.py PORT');
  assert.ok(start >= 0, 'docs/environments.md shows guess.py');
  return page.slice(start, page.indexOf('```', start));
}

/** The last step's metrics of a run folder in the workspace. */
function lastMetrics(run: string): Record<string, number> {
  const lines = readFileSync(ws.path(run, 'metrics.jsonl'), 'utf8').trim().split('\n');
  return JSON.parse(lines.at(-1)!) as Record<string, number>;
}

function branchedByReplay(run: string): void {
  const m = lastMetrics(run);
  assert.ok(m.replay_restores! > 0, `${run}: continuations restored by replay`);
  assert.equal(m.replay_mismatches, 0, `${run}: every replay matched`);
}

const servers: Background[] = [];

docTests('test/docs/run-remote.test.ts', [
  [
    'python3 guess.py 8001 &',
    async (s) => {
      writeFileSync(ws.path('guess.py'), guessPy());
      const port = await freePort();
      ports.set('8001', port);
      const bg = ws.start(rewrite(s.text, [['8001 &', String(port)]]));
      servers.push(bg);
      // Up when /create answers.
      for (let i = 0; ; i++) {
        const ok = await fetch(`http://127.0.0.1:${port}/create`, { method: 'POST', body: '{}' }).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        assert.ok(i < 100, `guess.py did not start:\n${bg.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  ],
  [
    'npx trace-rl train --env agentgym --set env.url=http://127.0.0.1:8001 --set env.tasks.from=0 --set env.tasks.to=40 --set env.testTasks.from=40 --set env.testTasks.to=50 --set env.action.text=input --strategy trace --budget 48 --pool 16 --steps 5 --out runs/guess',
    async (s) => {
      await ws.ok(s.place, withFlags(rewrite(s.text, [['127.0.0.1:8001', `127.0.0.1:${ports.get('8001')}`]]), '--steps 1 --set eval.questions=5'), 300_000);
      branchedByReplay('runs/guess');
    },
  ],
  [
    'npx trace-rl env serve --kind world --protocol openenv --port 8000 &',
    async (s) => {
      const bg = ws.start(rewrite(s.text, [['--port 8000 &', '--port 0']]));
      servers.push(bg);
      const url = (await ws.waitFor(bg, / at (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
      ports.set('8000', Number(new URL(url).port));
    },
  ],
  [
    "npx trace-rl train --env openenv --set env.url=http://127.0.0.1:8000 --set env.tasks.from=0 --set env.tasks.to=1200 --set env.questionAfter='Question: ' --set env.successThreshold=0.3 --set env.action.text=action --set predictor.useGold=false --strategy trace --set strategy.preset=paper --steps 10 --out runs/wire",
    async (s) => {
      const cmd = withFlags(
        rewrite(s.text, [['127.0.0.1:8000', `127.0.0.1:${ports.get('8000')}`]]),
        '--steps 1 --set env.tasks.to=100 --budget 48 --pool 16 --set eval.questions=5',
      );
      await ws.ok(s.place, cmd, 300_000);
      branchedByReplay('runs/wire');
      await Promise.all(servers.map((b) => b.stop()));
    },
  ],
]);
