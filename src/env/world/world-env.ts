/**
 * The embedded multi-hop world as a Search-R1 environment (the default training environment): a
 * seeded world, its questions as prompts (train/test), BM25 search over its passages, and
 * `candidatesFrom`, which lists what an action-choosing policy can pick from: entity names to search
 * and spans to answer, read from the question and the passages retrieved so far.
 */
import { Bm25Index } from '../search/bm25.ts';
import { SearchEnv, type SearchState } from '../search/search-env.ts';
import { titlesIn, type Passage } from '../search/search-r1.ts';
import type { SuccessRule } from '../qa/qa-metrics.ts';
import { DEFAULT_WORLD_SIZE, generateWorld, type WorldSize } from './generate.ts';
import { generateQuestions, splitQuestions } from './questions.ts';
import type { World, WorldQuestion } from './types.ts';
import type { WorldProfile } from './profile.ts';
import type { Prompt, Turn } from '../../tree/types.ts';
import type { ActionCandidates, CandidateSource } from '../types.ts';

export interface WorldEnvOptions {
  seed: number;
  size?: Partial<WorldSize>;
  /** Questions generated in all (before the split). Default 1500. */
  questions?: number;
  /** Share of questions held out for test. Default 0.2. */
  testFraction?: number;
  topK?: number;
  /** Default 6: a 4-hop question needs 5 turns, leaving one spare. */
  maxTurns?: number;
  success?: SuccessRule;
  /** Prompt text form (SearchEnvOptions.prompt). Default 'search-r1'. */
  prompt?: 'search-r1' | 'question';
  /** World profile (src/env/world/profile.ts): default, or late = 3–4-hop bridges whose later choices decide. Default 'default'. */
  profile?: WorldProfile;
}

/** What a question's prompt carries in `meta.world`. */
export interface WorldPromptMeta {
  kind: WorldQuestion['kind'];
  hops: number;
  goldPath: string[];
  mentions: string[];
}

export interface Candidates {
  /** Entity names seen in the question or retrieved passages, first-seen order. */
  search: string[];
  /** Entity names and stated values (years, continents, occupations), plus yes/no for yes-no questions. */
  answer: string[];
}

export function questionToPrompt(q: WorldQuestion): Prompt {
  const meta: WorldPromptMeta = { kind: q.kind, hops: q.hops, goldPath: q.goldPath, mentions: q.mentions };
  return { id: q.id, question: q.question, answers: [q.answer], meta: { world: meta, dataset: 'world' } };
}

export function worldMeta(prompt: Prompt): WorldPromptMeta {
  const m = prompt.meta?.world as WorldPromptMeta | undefined;
  if (!m) throw new Error(`prompt ${prompt.id} is not a world question (no meta.world)`);
  return m;
}

export class WorldEnv extends SearchEnv {
  readonly world: World;
  readonly train: Prompt[];
  readonly test: Prompt[];
  readonly index: Bm25Index;
  readonly profile: WorldProfile;

  constructor(options: WorldEnvOptions) {
    const world = generateWorld(options.seed, { ...DEFAULT_WORLD_SIZE, ...options.size });
    const index = new Bm25Index(world.passages.map((p): Passage => ({ id: p.id, title: p.title, text: p.text })));
    super({
      tool: { name: 'world-bm25', search: (q, { k }) => index.search(q, k) },
      topK: options.topK,
      maxTurns: options.maxTurns ?? 6,
      success: options.success,
      ...(options.prompt ? { prompt: options.prompt } : {}),
      name: `world-${options.seed}`,
    });
    this.world = world;
    this.index = index;
    this.profile = options.profile ?? 'default';
    const split = splitQuestions(generateQuestions(world, options.questions ?? 1500, world.seed, this.profile), {
      testFraction: options.testFraction ?? 0.2,
      seed: options.seed,
    });
    this.train = split.train.map(questionToPrompt);
    this.test = split.test.map(questionToPrompt);
  }

  /** Search and answer candidates for the state (see {@link candidatesFrom}). */
  candidates(state: SearchState): Candidates {
    return candidatesFrom(this.world, state);
  }
}

/** The world's candidate extraction ({@link candidatesFrom}) at any recorded prefix, for the embedded policy. */
export function worldCandidateSource(env: {
  restore(prompt: Prompt, turns: readonly Turn[]): unknown;
  candidates(state: never): ActionCandidates;
}): CandidateSource {
  return (prompt, turns) => env.candidates(env.restore(prompt, turns) as never);
}

/** Candidates read from the question's named entities and the passages shown so far (by their titles). */
export function candidatesFrom(world: World, state: SearchState): Candidates {
  const search = new Set<string>();
  const answer = new Set<string>();
  const meta = state.prompt.meta?.world as WorldPromptMeta | undefined;
  const named = meta?.mentions ?? [...world.byName.keys()].filter((n) => state.prompt.question.includes(n));
  for (const n of named) {
    search.add(n);
    answer.add(n);
  }
  if (meta?.kind === 'yes-no') {
    answer.add('yes');
    answer.add('no');
  }
  const byTitle = new Map(world.passages.map((p) => [p.title, p]));
  for (const step of state.steps) {
    for (const title of titlesIn(step.observation)) {
      const p = byTitle.get(title);
      if (!p) continue;
      search.add(p.title);
      answer.add(p.title);
      for (const m of p.mentions) {
        search.add(m);
        answer.add(m);
      }
      for (const v of p.values) answer.add(v);
    }
  }
  return { search: [...search], answer: [...answer] };
}
