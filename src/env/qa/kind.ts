/** The qa kind (env.kind qa): real multi-hop QA datasets with Search-R1 retrieval. */
import { z } from 'zod';
import { seed, successOf, successRule, successThreshold, testFraction, topK } from '../kind-fields.ts';
import { envKind, kindObject } from '../kind.ts';
import { ANSWER_METRICS } from '../metrics.ts';
import type { Environment } from '../types.ts';
import { checkSource, parseSourceShorthand } from './sources.ts';

/**
 * env.datasets: names or JSONL files, as a list or one comma-separated string; each item a string
 * (`name`, `name*weight`, `name:eval`) or `{ source, weight, evalOnly }`. Unknown names and missing
 * files fail here, with the item's index.
 */
const qaDatasets = z
  .preprocess(
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : v,
    z
      .array(
        z
          .union([
            z.string().min(1).transform(parseSourceShorthand),
            z.object({ source: z.string().min(1), weight: z.number().positive().default(1), evalOnly: z.boolean().default(false) }).strict(),
          ])
          .superRefine((d, ctx) => {
            const problem = checkSource(d.source);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
            if (!(d.weight > 0)) ctx.addIssue({ code: 'custom', message: `weight ${d.weight} must be a positive number` });
          }),
      )
      .min(1),
  )
  .prefault(['hotpotqa'])
  .describe(
    'qa: datasets — bundled names (hotpotqa, 2wiki, musique, bamboogle) or JSONL files (HotpotQA, 2Wiki, MuSiQue or {id, question, answer|answers} rows); `name*0.5` sets a mixing weight (share of its training questions; >1 repeats them), `name:eval` holds a dataset out entirely. A list, or one comma-separated string.',
  );

const qa = kindObject('qa', {
  seed,
  testFraction,
  datasets: qaDatasets,
  retrieval: z
    .enum(['per-question', 'pooled', 'url'])
    .default('per-question')
    .describe(
      'qa: per-question = each question searches its own paragraphs (distractor setting; questions without paragraphs use the pooled index); pooled = one BM25 index over all paragraphs of env.datasets, cached on disk; url = a Search-R1-compatible retriever at env.retrieverUrl.',
    ),
  retrieverUrl: z
    .string()
    .url()
    .optional()
    .describe('qa with retrieval url: base URL of the retriever service (POST /retrieve), e.g. http://127.0.0.1:8000 from `trace-rl retriever serve`.'),
  retrieverTimeoutMs: z
    .number()
    .positive()
    .default(30_000)
    .describe('qa with retrieval url: per-request timeout; a timeout, HTTP error or malformed reply is retried, then recorded on the turn as a tool error.'),
  cacheDir: z
    .string()
    .optional()
    .describe(
      'qa: folder of the pooled BM25 index cache, keyed by a hash of the paragraphs (default $XDG_CACHE_HOME/trace-rl/bm25 or ~/.cache/trace-rl/bm25).',
    ),
  topK,
  successRule,
  successThreshold,
}).refine((e) => e.retrieval !== 'url' || e.retrieverUrl !== undefined, {
  message: 'retrieval url needs env.retrieverUrl, e.g. http://127.0.0.1:8000 (start one with `trace-rl retriever serve --dataset hotpotqa`)',
  path: ['retrieverUrl'],
});

export const qaKind = envKind('qa', qa, {
  async build(s, { maxTurns }) {
    const [{ QaEnv }, { qaCandidates }] = await Promise.all([import('./qa-env.ts'), import('./candidates.ts')]);
    const { kind: _kind, successRule: _rule, successThreshold: _threshold, ...options } = s;
    const env = new QaEnv({ ...options, maxTurns, success: successOf(s) });
    return {
      env: env as Environment<unknown>,
      train: env.train,
      test: env.test,
      heldOut: env.heldOut,
      candidates: (prompt, turns) => qaCandidates(prompt, turns),
    };
  },
  metrics: ANSWER_METRICS,
  // Every dataset gets its own EM and F1.
  heldOutByDataset: true,
  datasetsSetting: { path: 'env.datasets' },
});
