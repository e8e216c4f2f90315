/**
 * A Search-R1 question-answering environment over any search tool (BM25 over passages, an HTTP
 * retriever, the embedded world). One turn is one action: `search` calls the tool and shows the top-k
 * documents; `answer` ends the episode with reward = success(F1/EM against the gold answers).
 * Invalid actions (unparseable text, unknown tool, empty query or answer) are answered with an
 * observation naming the rule and count as a turn; reaching the turn limit without an answer ends the
 * episode with reward 0 and reason 'turn_limit'. States are frozen values holding the (action,
 * observation) history, so `restore` rebuilds them from recorded turns without calling the tool.
 */
import type { Action, Prompt, Turn } from '../../tree/types.ts';
import { EnvError } from '../errors.ts';
import { DEFAULT_SUCCESS, isSuccess, scoreAnswer, type SuccessRule } from '../qa/qa-metrics.ts';
import { formatInformation, invalidRule, parseTurn, renderQuestion, renderSearchR1, type Passage } from './search-r1.ts';
import type { Environment, StepOutcome } from '../types.ts';

/** Anything that returns ranked passages for a query; may depend on the prompt (per-question corpora). */
export interface SearchTool {
  readonly name: string;
  search(query: string, options: { prompt: Prompt; k: number; signal?: AbortSignal }): Promise<Passage[]> | Passage[];
}

export interface SearchEnvOptions {
  tool: SearchTool;
  /** Documents per search (Search-R1's topk). Default 3. */
  topK?: number;
  /** Turn limit. Default 6. */
  maxTurns?: number;
  success?: SuccessRule;
  name?: string;
  /** The prompt text: Search-R1's instructions + question (default), or the question alone (`Question: …`, what the tiny LM was trained on). */
  prompt?: 'search-r1' | 'question';
}

export interface SearchStep {
  readonly action: Action;
  readonly observation: string;
  /** The rule an invalid action broke. */
  readonly invalid?: string;
}

export interface SearchState {
  readonly prompt: Prompt;
  readonly turn: number;
  readonly steps: readonly SearchStep[];
  readonly done: boolean;
  readonly reward?: number;
  readonly score?: number;
  readonly reason?: string;
}

const TURN_LIMIT_OBSERVATION = '\nTurn limit reached; the episode ends without an answer.\n';

/** Why an action cannot be executed, or undefined when it can (pure: used by step and restore alike). */
export function checkAction(action: Action): { rule: string; message: string } | undefined {
  if (action.type === 'invalid') return { rule: invalidRule(action), message: action.input.replace(/^[a-z_]+:\s*/, '') };
  if (action.type !== 'search' && action.type !== 'answer') {
    return { rule: 'unknown_tool', message: `"${action.type}" is not a tool here; the tools are search and answer` };
  }
  if (action.input.trim().length === 0) {
    return action.type === 'search' ? { rule: 'empty_query', message: 'the search query is empty' } : { rule: 'empty_answer', message: 'the answer is empty' };
  }
  return undefined;
}

export function invalidObservation(rule: string, message: string): string {
  return `\nInvalid action (${rule}): ${message}. To search write <search>query</search>; to answer write <answer>text</answer>.\n`;
}

export class SearchEnv implements Environment<SearchState> {
  readonly name: string;
  readonly topK: number;
  readonly maxTurns: number;
  private readonly promptForm: 'search-r1' | 'question';
  readonly success: SuccessRule;
  readonly tool: SearchTool;

  constructor(options: SearchEnvOptions) {
    this.tool = options.tool;
    this.topK = options.topK ?? 3;
    this.maxTurns = options.maxTurns ?? 6;
    this.success = options.success ?? DEFAULT_SUCCESS;
    this.promptForm = options.prompt ?? 'search-r1';
    this.name = options.name ?? `search-r1:${options.tool.name}`;
    if (this.topK < 1 || this.maxTurns < 1) throw new EnvError(`${this.name}: topK and maxTurns must be ≥ 1`);
  }

  render(prompt: Prompt): string {
    return this.promptForm === 'question' ? renderQuestion(prompt.question) : renderSearchR1(prompt.question, { maxTurns: this.maxTurns, topK: this.topK });
  }

  parse(text: string): { thought: string; action: Action } {
    const p = parseTurn(text);
    return { thought: p.thought, action: p.action };
  }

  reset(prompt: Prompt): SearchState {
    if (prompt.answers.length === 0) throw new EnvError(`${this.name}: prompt ${prompt.id} has no gold answer`);
    return Object.freeze({ prompt, turn: 0, steps: Object.freeze([]), done: false });
  }

  async step(state: SearchState, action: Action, options: { signal?: AbortSignal } = {}): Promise<StepOutcome<SearchState>> {
    const pre = this.advance(state, action);
    if (pre.kind === 'final') return pre.outcome;
    const passages = await this.tool.search(action.input.trim(), { prompt: state.prompt, k: this.topK, signal: options.signal });
    return this.finish(state, action, formatInformation(passages.slice(0, this.topK)));
  }

  restore(prompt: Prompt, turns: readonly Turn[]): SearchState {
    let s = this.reset(prompt);
    for (const [i, t] of turns.entries()) {
      if (s.done) throw new EnvError(`${this.name}: turn ${i + 1} of ${prompt.id} follows the end of the episode`);
      const pre = this.advance(s, t.action);
      s = pre.kind === 'final' ? pre.outcome.state : this.finish(s, t.action, t.observation).state;
    }
    return s;
  }

  /** Everything except the tool call: invalid actions, answers and the turn limit. */
  private advance(state: SearchState, action: Action): { kind: 'final'; outcome: StepOutcome<SearchState> } | { kind: 'search' } {
    if (state.done) throw new EnvError(`${this.name}: step called on a finished episode (${state.prompt.id})`);
    const turn = state.turn + 1;
    const atLimit = turn >= this.maxTurns;
    const bad = checkAction(action);
    if (bad) {
      const observation = atLimit ? TURN_LIMIT_OBSERVATION : invalidObservation(bad.rule, bad.message);
      return {
        kind: 'final',
        outcome: this.next(state, { action, observation, invalid: bad.rule }, atLimit ? { reward: 0, score: 0, reason: 'turn_limit' } : undefined, bad.rule),
      };
    }
    if (action.type === 'answer') {
      const s = scoreAnswer(action.input.trim(), state.prompt.answers);
      const reward = isSuccess(s, this.success) ? 1 : 0;
      return { kind: 'final', outcome: this.next(state, { action, observation: '' }, { reward, score: s.f1, reason: 'answer' }) };
    }
    if (atLimit)
      return { kind: 'final', outcome: this.next(state, { action, observation: TURN_LIMIT_OBSERVATION }, { reward: 0, score: 0, reason: 'turn_limit' }) };
    return { kind: 'search' };
  }

  private finish(state: SearchState, action: Action, observation: string): StepOutcome<SearchState> {
    return this.next(state, { action, observation });
  }

  private next(state: SearchState, step: SearchStep, end?: { reward: number; score: number; reason: string }, invalid?: string): StepOutcome<SearchState> {
    const steps = Object.freeze([...state.steps, Object.freeze(step)]);
    const s: SearchState = Object.freeze({ prompt: state.prompt, turn: state.turn + 1, steps, done: end !== undefined, ...(end ?? {}) });
    return {
      state: s,
      observation: step.observation,
      done: end !== undefined,
      ...(end ?? {}),
      ...(invalid ? { invalid: true, reason: end?.reason ?? invalid } : {}),
    };
  }
}
