/**
 * A training step split across rollout worker processes (engine.workers > 1) on a server environment:
 * each worker holds its own sessions to the server, so the load it put there is counted in the worker
 * and summed into the step's metrics. Against `trace-rl env serve`'s own counts (GET /sessions's
 * figures, read in process here): env_steps + env_replayed_steps = its steps, env_resets + one reset per
 * task at setup = its resets, restore_forks = its forks, the per-server details sum to the same steps;
 * and the workers share env.sessions, so the server never holds more sessions than that at once.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import { readStepDetails } from '../../../src/record/index.ts';
import { RunStore } from '../../../src/store/index.ts';
import { ConfigError, parseTrainConfig, train } from '../../../src/train/index.ts';
import { servedWorld, SMALL_TRACE_RUN } from './served-world.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-workers-load-'));
after(() => rmSync(root, { recursive: true, force: true }));
const MAX_TURNS = 5;
const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 60 }), { maxTurns: MAX_TURNS });

test('with engine.workers: 2 the environment steps, resets and forks a run reports equal the server’s own counts, and the workers share env.sessions', async () => {
  const SESSIONS = 4;
  const { served, peak } = servedWorld(world, 16);
  const server = await serveEnvironment(served, 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  after(() => server.close());
  const TASKS = 8;
  const out = join(root, 'run');
  let t = 0;
  await train({
    out,
    clock: () => t++,
    config: {
      ...SMALL_TRACE_RUN,
      engine: { maxTurns: MAX_TURNS, workers: 2 },
      eval: { every: 100 },
      env: {
        kind: 'agentgym',
        url: server.url,
        tasks: { from: 0, to: TASKS },
        questionAfter: 'Question: ',
        successThreshold: 0.3,
        action: { text: 'action' },
        sessions: SESSIONS,
      },
    },
  });
  const store = RunStore.open(out, { readonly: true });
  const steps = store.steps();
  store.close();
  const sum = (key: string) => steps.reduce((a, s) => a + (s.metrics[key] ?? NaN), 0);
  assert.ok(sum('env_steps') > 0);
  assert.equal(sum('env_steps') + sum('env_replayed_steps'), served.counts.steps, 'every step the server served is in the run’s metrics');
  assert.equal(
    sum('env_resets') + TASKS,
    served.counts.resets,
    'resets: the run’s, plus one per task at setup (the workers take the coordinator’s first observations)',
  );
  assert.equal(sum('restore_forks'), served.counts.forks);
  const byServer = steps.reduce((a, s) => a + readStepDetails(s.details).servers!.byServer.reduce((b, x) => b + x.steps, 0), 0);
  assert.equal(byServer, served.counts.steps, 'details.servers: the steps each server was sent, workers included');
  assert.ok(peak() <= SESSIONS, `at most env.sessions open at once on the server, workers together (peak ${peak()})`);
});

test('more rollout workers than env.sessions is refused when the configuration is read, naming both settings and the fix', () => {
  assert.throws(
    () =>
      parseTrainConfig({
        strategy: { name: 'grpo', budget: 8 },
        pool: 4,
        engine: { workers: 3 },
        env: { kind: 'openenv', url: 'http://127.0.0.1:1', tasks: { from: 0, to: 4 }, sessions: 2 },
      }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /engine\.workers: env\.sessions 2 is below engine\.workers 3: .*set env\.sessions to 3 or more, or engine\.workers to 2 or less/.test(e.message),
  );
});
