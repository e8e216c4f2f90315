/**
 * The local Atropos trajectory API (atropos-api.ts) answers every recorded request of the real one
 * (vectors/atropos-api.json, recorded from atroposlib/api/server.py) with the same status and body;
 * fields listed under "any" (a random uuid, a validation error's wording) only have to be there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startAtroposApi } from './atropos-api.ts';

interface Exchange {
  request: { method: string; path: string; body?: unknown };
  response: { status: number; body?: unknown; text?: string };
  any?: string[];
  note?: string;
}

const vectors = JSON.parse(readFileSync(new URL('./vectors/atropos-api.json', import.meta.url), 'utf8')) as {
  scenarios: Array<{ name: string; exchanges: Exchange[] }>;
};

test('the recorded vectors cover the endpoints a rollout handler and a trainer use', () => {
  const seen = new Set(vectors.scenarios.flatMap((s) => s.exchanges.map((e) => `${e.request.method} ${e.request.path}`)));
  for (const route of [
    'POST /register',
    'POST /register-env',
    'POST /scored_data',
    'POST /scored_data_list',
    'GET /batch',
    'GET /status',
    'GET /info',
    'POST /disconnect-env',
  ])
    assert.ok(seen.has(route), route);
  const statuses = vectors.scenarios.flatMap((s) => s.exchanges.map((e) => (e.response.body as { status?: string } | undefined)?.status));
  for (const s of ['wait for trainer to start', 'success', 'received', 'buffered']) assert.ok(statuses.includes(s), s);
});

for (const scenario of vectors.scenarios) {
  test(`local Atropos API answers as recorded: ${scenario.name}`, async () => {
    const api = await startAtroposApi();
    try {
      for (const [i, ex] of scenario.exchanges.entries()) {
        const where = `#${i} ${ex.request.method} ${ex.request.path}${ex.note ? ` (${ex.note})` : ''}`;
        const res = await fetch(`${api.url}${ex.request.path}`, {
          method: ex.request.method,
          ...(ex.request.body !== undefined ? { body: JSON.stringify(ex.request.body), headers: { 'content-type': 'application/json' } } : {}),
        });
        assert.equal(res.status, ex.response.status, where);
        if (ex.response.text !== undefined) {
          assert.equal(await res.text(), ex.response.text, where);
          continue;
        }
        const body = (await res.json()) as Record<string, unknown>;
        const expected = { ...(ex.response.body as Record<string, unknown>) };
        for (const field of ex.any ?? []) {
          assert.ok(field in body, `${where}: ${field} is there`);
          delete body[field];
          delete expected[field];
        }
        assert.deepEqual(body, expected, where);
      }
    } finally {
      await api.close();
    }
  });
}
