/**
 * env.kind qa on the real bundled datasets: sources and mixing, the seeded split, the cached pooled
 * index, the Search-R1 reward rule, the environment contract (restore = replay, determinism), and the
 * url retriever over real HTTP — including a retriever that fails, whose failures must become turn
 * errors in the tree, never exceptions out of a step.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  Bm25Index,
  QaEnv,
  cachedIndex,
  capitalisedSpans,
  createRetrieverApp,
  indexKey,
  parseSourceShorthand,
  pooledPassages,
  qaCandidates,
  serveRetriever,
  type QaSourceSpec,
} from '../../src/env/index.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../../src/policy/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import type { Action, Prompt, Turn } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'qa-env-'));
const spec = (source: string, extra: Partial<QaSourceSpec> = {}): QaSourceSpec => ({ source, weight: 1, evalOnly: false, ...extra });
const cacheDir = tmp();

function env(datasets: QaSourceSpec[], extra: Partial<ConstructorParameters<typeof QaEnv>[0]> = {}): QaEnv {
  return new QaEnv({ datasets, retrieval: 'per-question', seed: 3, testFraction: 0.2, cacheDir, ...extra });
}

test('shorthand: name, name*weight, name:eval', () => {
  assert.deepEqual(parseSourceShorthand('hotpotqa'), spec('hotpotqa'));
  assert.deepEqual(parseSourceShorthand('musique*0.5'), spec('musique', { weight: 0.5 }));
  assert.deepEqual(parseSourceShorthand('data/x.jsonl*2:eval'), spec('data/x.jsonl', { weight: 2, evalOnly: true }));
});

test('split: seeded, disjoint, per dataset; eval-only datasets are all held out; weights subsample or repeat', () => {
  const a = env([spec('hotpotqa'), spec('bamboogle', { evalOnly: true })]);
  const b = env([spec('hotpotqa'), spec('bamboogle', { evalOnly: true })]);
  assert.deepEqual(
    a.train.map((p) => p.id),
    b.train.map((p) => p.id),
  );
  assert.equal(a.heldOut.get('hotpotqa')!.length, 80);
  assert.equal(a.heldOut.get('bamboogle')!.length, 125);
  assert.equal(a.train.length, 320);
  const test = new Set(a.test.map((p) => p.id));
  assert.ok(
    a.train.every((p) => !test.has(p.id)),
    'no training question is held out',
  );
  // Adding a dataset does not change another's split.
  const alone = env([spec('hotpotqa')]);
  assert.deepEqual(
    alone.heldOut.get('hotpotqa')!.map((p) => p.id),
    a.heldOut.get('hotpotqa')!.map((p) => p.id),
  );
  // Another seed, another split.
  const other = env([spec('hotpotqa')], { seed: 4 });
  assert.notDeepEqual(
    other.heldOut.get('hotpotqa')!.map((p) => p.id),
    alone.heldOut.get('hotpotqa')!.map((p) => p.id),
  );
  const mixed = env([spec('hotpotqa', { weight: 0.5 }), spec('musique', { weight: 2 })]);
  const byDs = (d: string) => mixed.train.filter((p) => p.meta?.dataset === d);
  assert.equal(byDs('hotpotqa').length, 160);
  assert.equal(byDs('musique').length, 160);
  assert.equal(new Set(mixed.train.map((p) => p.id)).size, mixed.train.length, 'copies get distinct ids');
  assert.ok(byDs('musique').some((p) => p.id.endsWith('~1')));
});

test('a JSONL file in the {id, question, answers} shape is a dataset named after the file', () => {
  const dir = tmp();
  const file = path.join(dir, 'my-qa.jsonl');
  writeFileSync(
    file,
    [
      { id: 'a1', question: 'Who wrote Hamlet?', answers: ['Shakespeare', 'William Shakespeare'] },
      { id: 'a2', question: 'Capital of France?', answer: 'Paris' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  const e = env([spec(file, { evalOnly: true })]);
  assert.deepEqual([...e.heldOut.keys()], ['my-qa']);
  const q = e.test.find((p) => p.id === 'a1')!;
  assert.deepEqual(q.answers, ['Shakespeare', 'William Shakespeare']);
  writeFileSync(file, '{"id": "x", "question": "no answer here"}\n');
  assert.throws(() => env([spec(file)]), /my-qa\.jsonl:1: .*answer/);
});

test('pooled index: built once, then loaded from the cache by content hash; other paragraphs, other key', () => {
  const dir = tmp();
  const e = env([spec('musique')], { retrieval: 'per-question' });
  const passages = pooledPassages(e.sources.flatMap((s) => s.examples));
  const first = cachedIndex(passages, { cacheDir: dir });
  assert.equal(first.source, 'built');
  assert.ok(existsSync(first.file));
  const second = cachedIndex(passages, { cacheDir: dir });
  assert.equal(second.source, 'hit');
  for (const q of ['Van Hook Township county seat', 'who founded the company']) {
    assert.deepEqual(second.index.search(q, 5), first.index.search(q, 5), q);
    assert.deepEqual(second.index.search(q, 5), new Bm25Index(passages).search(q, 5));
  }
  assert.notEqual(indexKey(passages.slice(1)), indexKey(passages));
  // A damaged cache file is rebuilt, not trusted.
  writeFileSync(first.file, readFileSync(first.file, 'utf8').slice(0, 100));
  assert.equal(cachedIndex(passages, { cacheDir: dir }).source, 'built');
  assert.equal(cachedIndex(passages, { cacheDir: dir }).source, 'hit');
});

test('reward: only text inside <answer> counts (Search-R1 format rule); EM or F1 threshold', async () => {
  const em = env([spec('hotpotqa')], { success: { rule: 'em', threshold: 0.3 } });
  const p = em.test[0]!;
  const gold = p.answers[0]!;
  const right = await em.step(em.reset(p), { type: 'answer', input: gold });
  assert.equal(right.reward, 1);
  const partial = await em.step(em.reset(p), { type: 'answer', input: `${gold} and more words here` });
  assert.equal(partial.reward, 0, 'EM needs the exact answer');
  const f1 = env([spec('hotpotqa')]);
  assert.equal((await f1.step(f1.reset(p), { type: 'answer', input: `${gold} extra` })).reward, 1, 'F1 ≥ 0.3 accepts a near answer');
  // The gold answer outside the tags is not an answer: an invalid turn, and the episode scores 0.
  const untagged = f1.parse(`The answer is ${gold}.`);
  assert.equal(untagged.action.type, 'invalid');
  let s = f1.reset(p);
  let out;
  for (let t = 0; t < f1.maxTurns; t++) {
    out = await f1.step(s, untagged.action);
    s = out.state;
    if (out.done) break;
  }
  assert.equal(out!.done, true);
  assert.equal(out!.reward, 0);
});

test('contract: restore(prefix) equals the replayed state, and two environments agree step by step', async () => {
  const a = env([spec('2wiki')]);
  const b = env([spec('2wiki')]);
  for (const p of a.test.slice(0, 5)) {
    let s = a.reset(p);
    let sb = b.reset(p);
    const turns: Turn[] = [];
    for (let t = 0; t < 3; t++) {
      const c = qaCandidates(p, turns);
      const action: Action =
        t < 2 ? { type: 'search', input: c.search[Math.min(t, c.search.length - 1)]! } : { type: 'answer', input: c.answer[0] ?? 'unknown' };
      const o = await a.step(s, action);
      const ob = await b.step(sb, action);
      assert.deepEqual(ob, o);
      turns.push({ thought: '', action, observation: o.observation });
      assert.deepEqual(a.restore(p, turns), o.state, `restore after ${turns.length} turns`);
      s = o.state;
      sb = ob.state;
      if (o.done) break;
    }
  }
});

test('per-question retrieval searches the question’s own paragraphs; Bamboogle (none) searches the pool', async () => {
  const e = env([spec('hotpotqa'), spec('bamboogle', { evalOnly: true })]);
  const h = e.heldOut.get('hotpotqa')![0]!;
  const own = new Set((h.meta!.paragraphs as Array<{ title: string }>).map((x) => x.title));
  const o = await e.step(e.reset(h), { type: 'search', input: h.question });
  const titles = [...o.observation.matchAll(/Title: "([^"]*)"/g)].map((m) => m[1]!);
  assert.equal(titles.length, 3);
  assert.ok(titles.every((t) => own.has(t)));
  const bam = e.heldOut.get('bamboogle')![0]!;
  const ob = await e.step(e.reset(bam), { type: 'search', input: bam.question });
  assert.equal([...ob.observation.matchAll(/Title: /g)].length, 3, 'pooled hotpotqa paragraphs answer a bamboogle search');
});

test('candidates: spans from the question and passages, yes/no for yes/no questions', () => {
  assert.deepEqual(capitalisedSpans('The University of Oxford is in England. He met John Smith in 1999.'), ['University of Oxford', 'England', 'John Smith']);
  const p: Prompt = { id: 'q', question: 'Were Scott Derrickson and Ed Wood of the same nationality?', answers: ['yes'] };
  const obs =
    '\n\n<information>Doc 1(Title: "Ed Wood (film)") Ed Wood is a 1994 American film directed by Tim Burton.\nDoc 2(Title: "Scott Derrickson") Scott Derrickson (born July 16, 1966) is an American director.</information>\n\n';
  const c = qaCandidates(p, [{ thought: '', action: { type: 'search', input: p.question }, observation: obs }]);
  for (const a of ['yes', 'no', 'Ed Wood (film)', 'Ed Wood', 'Tim Burton', '1994', 'July 16, 1966', 'Scott Derrickson', 'American'])
    assert.ok(c.answer.includes(a), a);
  for (const s of [p.question, 'Scott Derrickson', 'Ed Wood (film)', 'Tim Burton']) assert.ok(c.search.includes(s), s);
  assert.ok(!c.answer.includes('The') && !c.answer.includes('He'));
});

/** A policy that searches the question, then answers the first answer candidate (a fixed script). */
const scripted: Policy = {
  name: 'qa-scripted',
  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const c = qaCandidates(ctx.prompt, ctx.turns);
    const action = ctx.turns.length === 0 ? { type: 'search', input: ctx.prompt.question } : { type: 'answer', input: c.answer[0] ?? 'unknown' };
    return { text: `<${action.type}>${action.input}</${action.type}>`, action, generatedTokens: 8 };
  },
};

test('url retrieval over real HTTP matches pooled BM25, and every retriever failure is a turn error', async () => {
  const pooledEnv = env([spec('musique')], { retrieval: 'pooled' });
  const index = pooledEnv.pooledIndex().index;
  const server = await serveRetriever(index, { port: 0 });
  // A retriever that fails on purpose, in three ways: HTTP 503, a body that is not JSON, and no
  // answer at all (the client's timeout). A real HTTP server, because these are transport failures.
  const faulty = new Hono();
  const healthy = createRetrieverApp(index);
  let mode: 'ok' | '503' | 'garbage' | 'hang' | 'shape' = 'ok';
  faulty.post('/retrieve', async (c) => {
    if (mode === '503') return c.text('overloaded', 503);
    if (mode === 'garbage') return c.body('{"result": [[{"document"', 200, { 'content-type': 'application/json' });
    if (mode === 'shape') return c.json({ results: [] });
    if (mode === 'hang') await new Promise((r) => setTimeout(r, 1500));
    return healthy.fetch(c.req.raw);
  });
  const bad = await new Promise<{ url: string; close: () => void }>((resolve) => {
    const s = serve({ fetch: faulty.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () => {
          s.close();
          (s as { closeAllConnections?: () => void }).closeAllConnections?.();
        },
      }),
    );
  });
  try {
    const viaUrl = env([spec('musique')], { retrieval: 'url', retrieverUrl: server.url });
    for (const p of viaUrl.test.slice(0, 5)) {
      const a = await viaUrl.step(viaUrl.reset(p), { type: 'search', input: p.question });
      const b = await pooledEnv.step(pooledEnv.reset(p), { type: 'search', input: p.question });
      assert.equal(a.observation, b.observation, p.id);
    }
    const flaky = env([spec('musique')], { retrieval: 'url', retrieverUrl: bad.url, retrieverTimeoutMs: 300 });
    const prompts = flaky.test.slice(0, 2);
    for (const m of ['503', 'garbage', 'shape', 'hang'] as const) {
      mode = m;
      const r = await runStep({
        prompts,
        env: flaky,
        policy: scripted,
        rng: createRng(1),
        rootPlan: new Map(prompts.map((p) => [p.id, 1])),
        settings: { retry: { maxAttempts: 2, baseDelayMs: 1 }, timeoutMs: 5_000 },
      });
      assert.equal(r.failures.tool_error, 2, `${m}: both trajectories end in a recorded tool error`);
      for (const t of r.trees) {
        const leaf = Object.values(t.nodes).find((n) => n.end === 'error')!;
        assert.equal(leaf.turn!.error!.code, 'tool_error');
        assert.match(leaf.turn!.error!.message, /retriever/);
        assert.equal(leaf.reward, undefined);
      }
    }
    mode = 'ok';
    const r = await runStep({ prompts, env: flaky, policy: scripted, rng: createRng(1), rootPlan: new Map(prompts.map((p) => [p.id, 1])) });
    assert.equal(Object.keys(r.failures).length, 0, 'healthy again: no failures');
  } finally {
    bad.close();
    await server.close();
  }
});
