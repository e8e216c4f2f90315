/**
 * The environment family: one entry per kind, as the strategy family has one per name
 * (src/allocate/registry.ts). An entry is a strict zod schema of that kind's settings (`env:` of a run
 * configuration, with a literal `kind`), a `build` that makes the environment and its prompts, and
 * what it offers a policy (candidate actions for the embedded policy, or none: a policy that writes
 * text). A setting of another kind fails while parsing, under its own path. Adding a kind is one
 * folder and one line in BUILT_IN below (or `registerEnvKind` for a kind outside this package).
 *
 * Policies that belong to an environment (the simulator's, BFCL's and the math world's scripted
 * ones) live in src/policy and are attached there (src/policy/registry.ts): environments do not
 * depend on policies.
 */
import { z } from 'zod';
import type { Prompt } from '../tree/types.ts';
import { hasField, knownFields } from '../util/known-fields.ts';
import { BfclEnv } from './bfcl/index.ts';
import { InlineArithmeticTool, MathEnv, MathWorldEnv, createCodeTool, loadMathDataset, worldCandidates } from './math/index.ts';
import { QaEnv, checkSource, parseSourceShorthand, qaCandidates } from './qa/index.ts';
import { Simulator } from './simulator.ts';
import type { CandidateSource, Environment } from './types.ts';
import { WorldEnv, worldCandidateSource } from './world/index.ts';

/** What a built environment gives training, the rollout service and evaluation. */
export interface EnvironmentSetup {
  env: Environment<unknown>;
  train: Prompt[];
  test: Prompt[];
  /** Held-out prompts by dataset name (one entry, named after the kind, for generated environments). */
  heldOut: Map<string, Prompt[]>;
  /** Candidate actions for the embedded policy; absent when only a policy that writes text can act. */
  candidates?: CandidateSource;
}

/** What building an environment needs besides its own settings: the run's turn limit. */
export interface EnvBuildContext {
  maxTurns: number;
}

export interface EnvKind<K extends string = string, S extends { kind: K } = { kind: K }> {
  kind: K;
  /** Strict: a field this kind does not take is an error. Its `kind` is `z.literal(kind)`. */
  schema: z.ZodType<S, { kind: K }>;
  build(settings: S, context: EnvBuildContext): EnvironmentSetup;
  /**
   * Generated kinds make as many questions as asked: the settings with at least `n` held-out ones
   * (`trace-rl eval --questions n`). Absent for kinds that read their questions from files.
   */
  withHeldOut?(settings: S, n: number): S;
}

// Settings several kinds take, each described once.
const seed = z.number().int().min(0).default(7).describe('Seed of the generated world / simulator; fixed across the runs being compared, so every strategy sees the same questions.');
const questions = z.number().int().min(10).default(1500).describe('Questions generated in the world (before the train/test split) or simulator prompts.');
const testFraction = z.number().gt(0).lt(1).default(0.2).describe('Share of world questions held out for test accuracy (qa: of each dataset, by a seeded shuffle).');
const topK = z.number().int().min(1).default(3).describe('Documents returned per search.');
const successRule = z.enum(['f1', 'em', 'f1-or-em']).default('f1').describe('Success for allocation and reward: token F1 ≥ threshold, or exact match.');
const successThreshold = z.number().min(0).max(1).default(0.3).describe('F1 threshold of the f1 success rule (TRACE-SPEC §2).');

/**
 * env.datasets: names or JSONL files, as a list or one comma-separated string; each item a string
 * (`name`, `name*weight`, `name:eval`) or `{ source, weight, evalOnly }`. Unknown names and missing
 * files fail here, with the item's index.
 */
const qaDatasets = z
  .preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : v),
    z.array(
      z.union([
        z.string().min(1).transform(parseSourceShorthand),
        z.object({ source: z.string().min(1), weight: z.number().positive().default(1), evalOnly: z.boolean().default(false) }).strict(),
      ]).superRefine((d, ctx) => {
        const problem = checkSource(d.source);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
        if (!(d.weight > 0)) ctx.addIssue({ code: 'custom', message: `weight ${d.weight} must be a positive number` });
      }),
    ).min(1),
  )
  .prefault(['hotpotqa'])
  .describe('qa: datasets — bundled names (hotpotqa, 2wiki, musique, bamboogle) or JSONL files (HotpotQA, 2Wiki, MuSiQue or {id, question, answer|answers} rows); `name*0.5` sets a mixing weight (share of its training questions; >1 repeats them), `name:eval` holds a dataset out entirely. A list, or one comma-separated string.');

/** The code tool's settings (env.math of kinds math and math-world). */
const codeToolFields = {
  url: z.string().optional().describe('tool url only: base URL of the SandboxFusion server, e.g. http://localhost:8080.'),
  workers: z.number().int().min(1).default(1).describe('tool pyodide only: sandbox processes running cells in parallel (up to this).'),
  unsafeUnconfined: z.boolean().default(false).describe('tool pyodide only: run model-written code WITHOUT the operating system\'s confinement (no bubblewrap, seccomp or resource limits; Node\'s permission model only), for machines that cannot confine it. Unsafe with any model output: prefer installing bubblewrap or env.math.tool url.'),
  packagesDir: z.string().optional().describe('tool pyodide only: a directory of pure-Python packages (pip install --target DIR sympy mpmath) made importable in the sandbox.'),
  timeoutMs: z.number().int().min(100).default(5000).describe('Wall time per code cell (ms).'),
  memoryMb: z.number().int().min(32).default(256).describe('Python heap per interpreter (MB; pyodide) / memory_limit_MB sent to the url sandbox.'),
  outputBytes: z.number().int().min(64).default(16384).describe('stdout + stderr kept per cell; more stops the cell with an OutputLimitError.'),
};
const toolDescription = 'Code tool: pyodide (Python in WebAssembly, each trajectory in its own process confined by bubblewrap, seccomp and resource limits, offline; the default for math; docs/reliability.md), url (a SandboxFusion run_code server) or inline (math-world only, its default: the world\'s print(a op b) cells evaluated in-process with Python semantics).';
const urlNeeded = (m: { tool?: string; url?: string }) => m.tool !== 'url' || m.url !== undefined;
const urlError = { message: 'env.math.tool url needs env.math.url (the SandboxFusion base URL)', path: ['url'] };

/** A kind's settings: strict, so a field of another kind fails under its own path. */
function kindObject<K extends string, S extends z.ZodRawShape>(kind: K, shape: S) {
  return z.strictObject({ kind: z.literal(kind), ...shape });
}

const world = kindObject('world', {
  seed,
  questions,
  testFraction,
  topK,
  successRule,
  successThreshold,
  prompt: z.enum(['search-r1', 'question']).default('search-r1').describe('World prompt text: search-r1 (instructions + question) or question (`Question: …` alone, what the tiny LM is trained on; use it when serving that model to an OpenAI policy).'),
  // Optional with no default, so a configuration that does not set it parses (and hashes its warm start) exactly as before.
  world: z.object({ profile: z.enum(['default', 'late']).default('default') }).strict().optional().describe('world only: profile default = the world as it always was; late = the late-decision world: 3–4-hop bridge questions only (no comparisons), so several choices follow the first search, and a sparser warm start (the demonstrator noise is policy.bc.noise × 2, capped at 1). docs/environments.md.'),
});

const simulator = kindObject('simulator', { seed, questions, testFraction });

const qa = kindObject('qa', {
  seed,
  testFraction,
  datasets: qaDatasets,
  retrieval: z.enum(['per-question', 'pooled', 'url']).default('per-question').describe('qa: per-question = each question searches its own paragraphs (distractor setting; questions without paragraphs use the pooled index); pooled = one BM25 index over all paragraphs of env.datasets, cached on disk; url = a Search-R1-compatible retriever at env.retrieverUrl.'),
  retrieverUrl: z.string().url().optional().describe('qa with retrieval url: base URL of the retriever service (POST /retrieve), e.g. http://127.0.0.1:8000 from `trace-rl retriever serve`.'),
  retrieverTimeoutMs: z.number().positive().default(30_000).describe('qa with retrieval url: per-request timeout; a timeout, HTTP error or malformed reply is retried, then recorded on the turn as a tool error.'),
  cacheDir: z.string().optional().describe('qa: folder of the pooled BM25 index cache, keyed by a hash of the paragraphs (default $XDG_CACHE_HOME/trace-rl/bm25 or ~/.cache/trace-rl/bm25).'),
  topK,
  successRule,
  successThreshold,
}).refine((e) => e.retrieval !== 'url' || e.retrieverUrl !== undefined, { message: 'retrieval url needs env.retrieverUrl, e.g. http://127.0.0.1:8000 (start one with `trace-rl retriever serve --dataset hotpotqa`)', path: ['retrieverUrl'] });

const bfcl = kindObject('bfcl', { seed, testFraction });

const math = kindObject('math', {
  math: z
    .strictObject({
      dataset: z.string().default('gsm8k-train').describe('math: training prompts: gsm8k-train, gsm8k, math500, aime24, aime25, or a JSONL file ({"question"|"problem", "answer"} per line).'),
      testDataset: z.string().default('gsm8k').describe('math: held-out prompts for evaluation (same choices as dataset).'),
      limit: z.number().int().min(1).optional().describe('math: use only the first this many prompts of each dataset.'),
      format: z.enum(['markdown', 'code-tag', 'tool-call']).default('markdown').describe('How the model writes code and sees its output: ```python / ```output fences, <code>/<interpreter>, or <tool_call>/<tool_response>.'),
      // inline runs only the math world's print(a op b) cells: refused here rather than when the run starts.
      tool: z.enum(['pyodide', 'url']).default('pyodide').describe(toolDescription),
      ...codeToolFields,
    })
    .refine(urlNeeded, urlError)
    .prefault({})
    .describe('math and math-world: datasets, code format and the code tool.'),
});

const mathWorld = kindObject('math-world', {
  seed,
  testFraction,
  math: z
    .strictObject({
      problems: z.number().int().min(10).default(1200).describe('math-world: problems generated (before the train/test split by env.testFraction).'),
      noise: z.number().min(0).max(1).default(0.3).describe('math-world: noise of the scripted policy (policy.kind scripted).'),
      tool: z.enum(['pyodide', 'url', 'inline']).default('inline').describe(toolDescription),
      ...codeToolFields,
    })
    .refine(urlNeeded, urlError)
    .prefault({})
    .describe('math and math-world: datasets, code format and the code tool.'),
});

/** Prompts grouped by a key of each, groups and prompts in the order the prompts come. */
function groupBy(prompts: readonly Prompt[], key: (p: Prompt) => string): Map<string, Prompt[]> {
  const groups = new Map<string, Prompt[]>();
  for (const p of prompts) groups.set(key(p), [...(groups.get(key(p)) ?? []), p]);
  return groups;
}

const successOf = (s: { successRule: 'f1' | 'em' | 'f1-or-em'; successThreshold: number }) => ({ rule: s.successRule, threshold: s.successThreshold });
const atLeastHeldOut = <S extends { questions: number; testFraction: number }>(s: S, n: number): S => ({ ...s, questions: Math.max(s.questions, Math.ceil(n / s.testFraction)) });

/** Defines a kind with its settings' types read from its schema. */
function envKind<K extends string, T extends z.ZodType<{ kind: K }, { kind: K }>>(kind: K, schema: T, rest: Omit<EnvKind<K, z.output<T>>, 'kind' | 'schema'>): EnvKind<K, z.output<T>> {
  return { kind, schema: schema as unknown as z.ZodType<z.output<T>, { kind: K }>, ...rest };
}

const BUILT_IN = [
  envKind('world', world, {
    build(s, { maxTurns }) {
      const env = new WorldEnv({ seed: s.seed, questions: s.questions, testFraction: s.testFraction, topK: s.topK, maxTurns, success: successOf(s), prompt: s.prompt, ...(s.world ? { profile: s.world.profile } : {}) });
      return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut: new Map([['world', env.test]]), candidates: worldCandidateSource(env) };
    },
    withHeldOut: atLeastHeldOut,
  }),
  envKind('simulator', simulator, {
    build(s, { maxTurns }) {
      const sim = new Simulator({ seed: s.seed, maxTurns });
      const all = sim.prompts(s.questions);
      const nTest = Math.max(1, Math.round(all.length * s.testFraction));
      const test = all.slice(0, nTest);
      return { env: sim as Environment<unknown>, train: all.slice(nTest), test, heldOut: new Map([['simulator', test]]) };
    },
    withHeldOut: atLeastHeldOut,
  }),
  envKind('qa', qa, {
    build(s, { maxTurns }) {
      const { kind: _kind, successRule: _rule, successThreshold: _threshold, ...options } = s;
      const env = new QaEnv({ ...options, maxTurns, success: successOf(s) });
      return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut: env.heldOut, candidates: (prompt, turns) => qaCandidates(prompt, turns) };
    },
  }),
  envKind('bfcl', bfcl, {
    build(s, { maxTurns }) {
      // No trainable policy here can call BFCL's functions (no such model on CPU): the scripted noisy policy drives it.
      const env = new BfclEnv({ seed: s.seed, testFraction: s.testFraction, maxTurns });
      const heldOut = groupBy(env.test, (p) => `bfcl_${(p.meta?.bfcl as { category: string }).category}`);
      return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut };
    },
  }),
  envKind('math', math, {
    build({ math: m }, { maxTurns }) {
      const env = new MathEnv({ tool: createCodeTool(m), format: m.format, maxTurns });
      const test = loadMathDataset(m.testDataset, { limit: m.limit });
      return { env: env as Environment<unknown>, train: loadMathDataset(m.dataset, { limit: m.limit }), test, heldOut: new Map([[m.testDataset, test]]) };
    },
  }),
  envKind('math-world', mathWorld, {
    build(s, { maxTurns }) {
      const m = s.math;
      const tool = m.tool === 'inline' ? new InlineArithmeticTool() : createCodeTool({ ...m, tool: m.tool });
      const env = new MathWorldEnv({ seed: s.seed, problems: m.problems, testFraction: s.testFraction, maxTurns, tool });
      // Held-out rows per difficulty (number of solution steps), easiest first.
      const byDifficulty = [...env.test].sort((a, b) => (a.meta!.steps as number) - (b.meta!.steps as number));
      const heldOut = groupBy(byDifficulty, (p) => `math-world-${p.meta!.steps as number}step`);
      const candidates: CandidateSource = (prompt, turns) => {
        const c = worldCandidates(prompt, turns);
        return { search: [], answer: [c.answer], tool: c.code.map((x) => ({ type: 'python', input: x.input })) };
      };
      return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut, candidates };
    },
  }),
] as const;

/** The settings of a built-in kind, defaults filled (config.env). */
export type EnvConfig = z.output<(typeof BUILT_IN)[number]['schema']>;
export type EnvKindName = EnvConfig['kind'];
export const ENV_KIND_NAMES = BUILT_IN.map((k) => k.kind) as EnvKindName[];
export const DEFAULT_ENV_KIND: EnvKindName = 'world';

const kinds = new Map<string, EnvKind>(BUILT_IN.map((k) => [k.kind, k as unknown as EnvKind]));
let union: { size: number; schema: z.ZodType } | undefined;

/**
 * Adds a kind defined outside src/env (an example, a plugin); its `kind` must be new. The run
 * configuration's `env` accepts it from then on.
 */
export function registerEnvKind<K extends string, S extends { kind: K }>(entry: EnvKind<K, S>): void {
  if (kinds.has(entry.kind)) throw new RangeError(`environment kind ${entry.kind} exists already`);
  kinds.set(entry.kind, entry as unknown as EnvKind);
}

export function envKindNames(): string[] {
  return [...kinds.keys()];
}

export function envKindOf(kind: string): EnvKind {
  const entry = kinds.get(kind);
  if (!entry) throw new RangeError(`no environment kind ${kind} (known: ${envKindNames().join(', ')})`);
  return entry;
}

/** Every kind's settings, discriminated by `kind` (rebuilt when a kind is registered). */
function envUnion(): z.ZodType {
  if (union?.size !== kinds.size) {
    const schemas = [...kinds.values()].map((k) => k.schema) as unknown as [z.ZodObject, ...z.ZodObject[]];
    const names = envKindNames().map((n) => JSON.stringify(n)).join('|');
    union = { size: kinds.size, schema: z.discriminatedUnion('kind', schemas, { error: (issue) => (issue.code === 'invalid_union' ? `Invalid option: expected one of ${names}` : undefined) }) };
  }
  return union.schema;
}

/**
 * `env:` of a run configuration: one kind's settings (kind world when not given). Lazy, so a kind
 * registered after this module loaded is accepted too.
 */
export const envConfigSchema = z.preprocess(
  (v) => (v === undefined ? { kind: DEFAULT_ENV_KIND } : typeof v === 'object' && v !== null && !('kind' in v) ? { kind: DEFAULT_ENV_KIND, ...v } : v),
  z.lazy(() => envUnion()),
) as unknown as z.ZodType<EnvConfig, unknown>;

/** The environment a configuration's `env:` names, built for a run with `maxTurns` turns. */
export function buildEnvironment(settings: { kind: string }, context: EnvBuildContext): EnvironmentSetup {
  return envKindOf(settings.kind).build(settings, context);
}

/** The kind's settings of a stored run: fields it does not take (older runs stored every kind's) dropped. */
export function storedEnvSettings(settings: unknown): unknown {
  const kind = (settings as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !kinds.has(kind)) return settings;
  return knownFields(kinds.get(kind)!.schema, settings);
}

/** The kinds that take a setting (a dotted path inside `env`): for the message when another kind is given it. */
export function envKindsTaking(field: string): string[] {
  return [...kinds.values()].filter((k) => hasField(k.schema, field)).map((k) => k.kind);
}
