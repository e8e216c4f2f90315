/**
 * Costs that reconcile (issue 67 item 5), against `trace-rl env serve`'s code counting what it serves
 * (GET /sessions): the environment steps a run reports, generated (env_steps) and replayed
 * (env_replayed_steps), sum to the server's own count of steps, and the resets it reports plus the
 * one first-observation reset per task at setup to the server's resets, with the fork extension on or
 * off (a fork is no step and no reset: restore_forks, the server's forks); and under env.action.text
 * input an unparseable turn never reaches the server (the trajectory ends invalid there).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentGymServer } from '../../../src/env/remote/agentgym-session.ts';
import { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { taskPrompt } from '../../../src/env/remote/tasks.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import { RunStore } from '../../../src/store/index.ts';
import { train } from '../../../src/train/index.ts';
import { SMALL_TRACE_RUN } from './served-world.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-costs-'));
after(() => rmSync(root, { recursive: true, force: true }));
const MAX_TURNS = 5;
const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 60 }), { maxTurns: MAX_TURNS });

for (const fork of [false, true])
  test(`the environment steps and resets a run reports equal the server’s own counts (trace: continuations restored by ${fork ? 'fork' : 'replay'}, held-out evaluation included)`, async () => {
    // env serve forks by default: a restore by fork sends no step and no reset (counted as restore_forks, and by the server as forks).
    const served = new ServedEnv(world, 'world', { maxSessions: 16, ...(fork ? { fork: { maxKept: 1024, ttlS: 600 } } : {}) });
    const server = await serveEnvironment(served, 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
    after(() => server.close());
    const TASKS = 8;
    const TEST_TASKS = 4;
    const first = world.train.length;
    const out = join(root, fork ? 'trace-fork' : 'trace');
    let t = 0;
    await train({
      out,
      clock: () => t++,
      config: {
        ...SMALL_TRACE_RUN,
        engine: { maxTurns: MAX_TURNS },
        eval: { every: 1, questions: TEST_TASKS },
        env: {
          kind: 'agentgym',
          url: server.url,
          tasks: { from: 0, to: TASKS },
          testTasks: { from: first, to: first + TEST_TASKS },
          questionAfter: 'Question: ',
          successThreshold: 0.3,
          action: { text: 'action' },
          sessions: 6,
        },
      },
    });
    const store = RunStore.open(out, { readonly: true });
    const steps = store.steps();
    store.close();
    const sum = (key: string) => steps.reduce((a, s) => a + (s.metrics[key] ?? NaN), 0);
    if (fork) {
      assert.ok(sum('restore_forks') > 0, 'continuations were restored by fork');
      assert.equal(sum('restore_forks'), served.counts.forks, 'every fork the server served is in the run’s metrics');
      assert.equal(sum('restore_fork_fallbacks'), 0);
    } else {
      assert.ok(sum('replay_steps') > 0, 'continuations were restored by replay');
      assert.equal(sum('restore_forks'), 0);
    }
    assert.equal(sum('env_steps') + sum('env_replayed_steps'), served.counts.steps, 'every step the server served is in the run’s metrics');
    assert.ok(sum('env_replayed_steps') >= sum('replay_steps'));
    assert.equal(sum('env_resets') + TASKS + TEST_TASKS, served.counts.resets, 'resets: the run’s, plus one per task at setup');
    assert.ok(sum('env_ms') > 0);
    assert.ok(sum('env_steps') !== sum('cost_tool_calls'), 'cost_tool_calls counts search calls only, not the environment steps the server served');
  });

test('under env.action.text input an unparseable turn is not sent: the trajectory ends invalid, the server counts no step', async () => {
  const served = new ServedEnv(world, 'world', { maxSessions: 4 });
  const server = await serveEnvironment(served, 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  after(() => server.close());
  const env = new RemoteEnv({
    server: new AgentGymServer({ url: server.url, timeoutMs: 5_000, maxReplyBytes: 1 << 20 }),
    maxTurns: MAX_TURNS,
    action: 'input',
    successThreshold: 0.3,
    sessions: 1,
    branching: 'replay',
  });
  const prompt = taskPrompt({ id: 'idx-0', params: { data_idx: 0 } }, { observation: world.env.render(world.train[0]!) }, 'agentgym');
  const s = await env.reset(prompt);
  const { action } = env.parse('<search>a</search><search>b</search>');
  assert.equal(action.type, 'invalid', 'two action tags in one turn');
  const o = await env.step(s, action);
  assert.equal(o.done, true);
  assert.equal(o.invalid, true);
  assert.equal(o.reward, 0);
  assert.equal(served.counts.steps, 0, 'the server was sent no step');
  const load = env.serverLoad();
  assert.deepEqual([load.resets, load.steps, load.replayedSteps], [1, 0, 0], 'the run reports the reset and no step');
  await env.release(o.state);
});
