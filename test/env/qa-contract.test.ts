/**
 * env.kind qa passes the shared Environment contract (test/contracts/environment.ts) in its three
 * retrieval modes, on real questions: per-question BM25 (HotpotQA, with Bamboogle searching the pool),
 * the cached pooled index (MuSiQue), and a Search-R1 retriever over real HTTP (2Wiki).
 */
import { after } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QaEnv, qaCandidates, serveRetriever, type QaEnvOptions } from '../../src/env/index.ts';
import type { RunningServer } from '../../src/http/index.ts';
import { EmbeddedPolicy } from '../../src/policy/index.ts';
import { environmentContract } from '../contracts/environment.ts';
import { policyContract } from '../contracts/policy.ts';
import { RandomSearchR1Policy } from '../contracts/episode.ts';

const cacheDir = mkdtempSync(path.join(tmpdir(), 'qa-contract-'));
const spec = (source: string, evalOnly = false) => ({ source, weight: 1, evalOnly });
const options = (extra: Partial<QaEnvOptions>): QaEnvOptions => ({
  datasets: [spec('hotpotqa')],
  retrieval: 'per-question',
  seed: 2,
  testFraction: 0.2,
  cacheDir,
  maxTurns: 4,
  ...extra,
});
// An untrained embedded policy sampling from the QA candidate spans: real searches and real answers.
const spans = new EmbeddedPolicy({ candidates: (prompt, turns) => qaCandidates(prompt, turns) });

const perQuestion = options({ datasets: [spec('hotpotqa'), spec('bamboogle', true)] });
const pq = new QaEnv(perQuestion);
environmentContract('qa per-question (hotpotqa + bamboogle)', {
  make: () => new QaEnv(perQuestion),
  prompts: [...pq.heldOut.get('hotpotqa')!.slice(0, 3), ...pq.heldOut.get('bamboogle')!.slice(0, 2)],
  policy: spans,
});

const pooled = options({ datasets: [spec('musique')], retrieval: 'pooled' });
environmentContract('qa pooled (musique, cached index)', {
  make: () => new QaEnv(pooled),
  prompts: new QaEnv(pooled).test.slice(0, 4),
  policy: spans,
});

let server: RunningServer | undefined;
after(() => server?.close());
const twoWiki = options({ datasets: [spec('2wiki')], retrieval: 'pooled' });
environmentContract('qa url (2wiki through a Search-R1 retriever over HTTP)', {
  make: async () => {
    server ??= await serveRetriever(new QaEnv(twoWiki).pooledIndex().index, { port: 0 });
    return new QaEnv({ ...twoWiki, retrieval: 'url', retrieverUrl: server.url });
  },
  prompts: new QaEnv(twoWiki).test.slice(0, 3),
  policy: new RandomSearchR1Policy(),
});

// The embedded policy on real text passes the Policy contract too (update, save/load round trip).
policyContract('embedded on qa (HotpotQA candidate spans)', {
  make: () => new EmbeddedPolicy({ candidates: (prompt, turns) => qaCandidates(prompt, turns) }),
  env: pq,
  prompts: pq.heldOut.get('hotpotqa')!.slice(0, 3),
  update: { learningRate: 0.1, clip: 0.2, epochs: 1 },
});
