/**
 * The report's notes on a server environment's runs name how prefixes were restored (fork where the
 * servers kept the state, else replay) and, for a fleet, each server's load and the failovers, summed
 * over the run's steps as stored in details.replay and details.servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunData } from '../../src/report/load-runs.ts';
import { replayNotes } from '../../src/report/replay-notes.ts';

const replay = { mismatches: {}, restores: 4, steps: 1, ms: 500 };
const server = (url: string, sessions: number, steps: number, failures: number) => ({ url, sessions, steps, failures });

function run(dir: string, servers: object[]): RunData {
  return {
    dir,
    strategy: 'trace',
    seed: 0,
    status: 'finished',
    notes: [],
    steps: servers.map((s, step) => ({ step, metrics: {}, details: { replay, servers: s } })) as unknown as RunData['steps'],
  };
}

test('the report names the restore method and, for a fleet, each server’s load and the failovers', () => {
  const fleet = run('runs/fleet', [
    { restoreMethod: 'fork', forks: 3, forkFallbacks: 1, failovers: 0, byServer: [server('http://a', 5, 20, 0), server('http://b', 4, 18, 0)] },
    { restoreMethod: 'fork', forks: 2, forkFallbacks: 0, failovers: 2, byServer: [server('http://a', 1, 3, 2), server('http://b', 6, 25, 0)] },
  ]);
  const single = run('runs/one', [{ restoreMethod: 'replay', forks: 0, forkFallbacks: 0, failovers: 0, byServer: [server('http://a', 5, 20, 0)] }]);
  const notes = replayNotes([fleet, single]);
  assert.ok(
    notes.includes(
      'runs/fleet: prefixes restored by fork where the server kept the state (5 forks; 1 refused or differing, replayed), else by replay: 8 restores, 2 environment steps, 1.0 s (outside the budget)',
    ),
    notes.join('\n'),
  );
  assert.ok(
    notes.includes(
      'runs/fleet: server load: http://a 6 sessions, 23 steps, 2 failures; http://b 10 sessions, 43 steps, 0 failures; 2 trajectories failed over to another server',
    ),
    notes.join('\n'),
  );
  assert.ok(notes.includes('runs/one: prefixes restored by replay: 4 restores, 1 environment steps, 0.5 s (outside the budget)'), notes.join('\n'));
  assert.ok(!notes.some((n) => n.startsWith('runs/one: server load')), 'one server: no load note');
});
