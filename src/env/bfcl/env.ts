/**
 * BFCL v4 multi-turn as an Environment. One prompt is one entry; its user turns come one after the
 * other. Within a user turn the model takes steps: a step with calls (action `tool_calls`, input a
 * JSON array of BFCL call strings) runs them and observes their results; a step without calls (action
 * `answer`, or an unreadable step) ends the user turn, and the next user message is the observation.
 * After the last user turn the whole attempt goes through BFCL's checker: reward 1 when it passes.
 * More than 20 call steps in one user turn stops the episode with reward 0 (BFCL's forced quit), and
 * so does the episode's step limit `maxTurns` (reason `turn_limit`).
 *
 * One deliberate difference from BFCL's harness: a step that is neither calls nor a non-blank text
 * reply (an unknown action type, tool calls that cannot be read, a blank reply) does not end the user
 * turn — the observation says what was wrong and the model tries again — so that failures are data
 * for the rollout engine (the project's environment contract). BFCL would move to the next user turn.
 *
 * Each step is a tree node, so prefixes can be expanded. The state is a value (the steps so far);
 * calls are re-executed from the initial config when needed, which keeps states restorable.
 * miss_func entries start without their held-back functions and add them at the turn BFCL does, with
 * the user message "I have updated some more functions you can choose from. What about now?".
 */
import type { Environment, StepOutcome } from '../types.ts';
import type { Action, Prompt, Turn } from '../../tree/types.ts';
import { createRng } from '../../util/rng.ts';
import { EnvError } from '../errors.ts';
import { type Attempt, checkAttempt, type CheckResult } from './checker.ts';
import { type BfclEntry, type Category, CATEGORIES, DEFAULT_BFCL_DIR, type FunctionDoc, loadCategory, loadClassDocs } from './data.ts';
import { Session } from './executor.ts';
import { loadLongContextData, SharedState } from './apis/shared.ts';
import { pyRepr } from './py/format.ts';
import { dict, type PyDict } from './py/value.ts';
import { readStepText, stringToToolCall, toOpenAITools, toolCallToString, type OpenAITool } from './tools.ts';

/** BFCL's step limit per user turn (MAXIMUM_STEP_LIMIT). */
export const MAX_STEPS_PER_TURN = 20;
export const ADDED_FUNCTIONS_MESSAGE = 'I have updated some more functions you can choose from. What about now?';

export interface BfclEnvOptions {
  /** Folder with the BFCL data; default the repository's data/bfcl. */
  dataDir?: string;
  categories?: readonly Category[];
  /** Seed of the train/test split. */
  seed: number;
  /** Share held out for test (default 0.2). */
  testFraction?: number;
  /**
   * The date verify_traveler_information computes ages from. BFCL uses the real date; the default is a
   * fixed 2025-01-01 so that training runs are reproducible (every birth date in the data is decades
   * away from the 18-year limit, so the verdicts are the same).
   */
  today?: { year: number; month: number; day: number };
  /** Episode step limit for the engine; default 60. */
  maxTurns?: number;
}

/** One model step as the environment records it. */
interface Step {
  userTurn: number;
  calls: string[];
}

export interface BfclState {
  promptId: string;
  steps: readonly Step[];
  userTurn: number;
  /** Model steps taken, of every kind (the episode's turn count). */
  taken: number;
  done: boolean;
}

/** What one action does to the episode, before any call runs. */
type Move = { kind: 'calls'; calls: string[] } | { kind: 'answer' } | { kind: 'invalid'; reason: string };

/** Chat messages in OpenAI's format for a BFCL conversation. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export class BfclEnv implements Environment<BfclState> {
  readonly name = 'bfcl';
  readonly maxTurns: number;
  readonly entries = new Map<string, BfclEntry>();
  readonly train: Prompt[];
  readonly test: Prompt[];
  private readonly longContextData: PyDict;
  private readonly docs = new Map<string, FunctionDoc[]>();
  private readonly today: { year: number; month: number; day: number };

  constructor(options: BfclEnvOptions) {
    const dataDir = options.dataDir ?? DEFAULT_BFCL_DIR;
    for (const c of options.categories ?? CATEGORIES) for (const e of loadCategory(dataDir, c)) this.entries.set(e.id, e);
    this.longContextData = loadLongContextData(dataDir);
    for (const e of this.entries.values()) for (const cls of e.involvedClasses) if (!this.docs.has(cls)) this.docs.set(cls, loadClassDocs(dataDir, cls));
    this.today = options.today ?? { year: 2025, month: 1, day: 1 };
    this.maxTurns = options.maxTurns ?? 60;
    const prompts = [...this.entries.values()].map((e) => this.toPrompt(e));
    // Seeded Fisher–Yates, then the first testFraction of the shuffled prompts is the test split.
    const rng = createRng(options.seed).fork('bfcl-split');
    for (let i = prompts.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [prompts[i], prompts[j]] = [prompts[j]!, prompts[i]!];
    }
    const nTest = Math.round(prompts.length * (options.testFraction ?? 0.2));
    this.test = prompts.slice(0, nTest);
    this.train = prompts.slice(nTest);
  }

  private toPrompt(e: BfclEntry): Prompt {
    return { id: e.id, question: this.userMessage(e, 0, 'chat'), answers: [], meta: { dataset: 'bfcl', bfcl: { category: e.category } } };
  }

  entry(prompt: Prompt | string): BfclEntry {
    const id = typeof prompt === 'string' ? prompt : prompt.id;
    const e = this.entries.get(id);
    if (!e) throw new Error(`unknown BFCL entry ${id}`);
    return e;
  }

  /** The functions the model may call at a user turn (miss_func holds some back until their turn). */
  functions(entry: BfclEntry, userTurn: number): FunctionDoc[] {
    const all = entry.involvedClasses.flatMap((c) => this.docs.get(c) ?? []);
    const hidden = new Set<string>();
    for (const [turn, names] of entry.missedFunction) if (turn > userTurn) names.forEach((n) => hidden.add(n));
    return all.filter((d) => !hidden.has(d.name));
  }

  tools(prompt: Prompt, state: BfclState): OpenAITool[] {
    return toOpenAITools(this.functions(this.entry(prompt), state.userTurn));
  }

  /** The user's message at a turn; a held-back-function turn has none in the data and gets BFCL's fixed text. */
  userMessage(entry: BfclEntry, turn: number, mode: 'chat' | 'prompt'): string {
    const revealed = entry.missedFunction.get(turn);
    if (revealed) {
      if (mode === 'chat') return ADDED_FUNCTIONS_MESSAGE;
      const added = this.functions(entry, turn).filter((d) => revealed.includes(d.name));
      return `${JSON.stringify(added)}\n${ADDED_FUNCTIONS_MESSAGE}`;
    }
    return (entry.question[turn] ?? []).map((m) => m.content).join('\n\n');
  }

  reset(prompt: Prompt): BfclState {
    this.entry(prompt);
    return { promptId: prompt.id, steps: [], userTurn: 0, taken: 0, done: false };
  }

  /** The completion-mode prompt: instructions, the functions as JSON, the first user message. */
  render(prompt: Prompt): string {
    const e = this.entry(prompt);
    return [
      "You can call functions to carry out the user's requests. To call functions, reply with nothing but a Python-style list:",
      '[func_name1(param_name1=value1, param_name2=value2), func_name2(param=value)]',
      "You will see each call's result. Keep calling functions until the request is done, then reply in plain text;",
      'a reply without function calls ends your turn. If no function fits, or a required parameter is missing, say so instead.',
      '',
      'Functions (JSON):',
      JSON.stringify(this.functions(e, 0)),
      '',
      `User: ${this.userMessage(e, 0, 'prompt')}`,
      'Assistant: ',
    ].join('\n');
  }

  /** The calls of a `tool_calls` action, or null when the action is not a readable, non-empty list of calls. */
  private callsOf(action: Action): string[] | null {
    if (action.type !== 'tool_calls') return null;
    try {
      const calls = JSON.parse(action.input) as unknown;
      if (Array.isArray(calls) && calls.every((c) => typeof c === 'string') && calls.length > 0) return calls as string[];
    } catch {
      /* handled as an invalid step */
    }
    return null;
  }

  private move(action: Action): Move {
    const calls = this.callsOf(action);
    if (calls) return { kind: 'calls', calls };
    if (action.type === 'answer' && action.input.trim() !== '') return { kind: 'answer' };
    if (action.type === 'answer') return { kind: 'invalid', reason: 'empty_answer' };
    if (action.type === 'tool_calls') return { kind: 'invalid', reason: 'unreadable_tool_calls' };
    if (action.type === 'invalid') return { kind: 'invalid', reason: action.input.split(':')[0] || 'invalid' };
    return { kind: 'invalid', reason: 'unknown_action' };
  }

  /** The next state after an action (no call is executed here; `step` runs them). */
  private advance(state: BfclState, move: Move, entry: BfclEntry): BfclState {
    const taken = state.taken + 1;
    if (move.kind === 'calls') {
      const steps = [...state.steps, { userTurn: state.userTurn, calls: move.calls }];
      const overLimit = steps.filter((s) => s.userTurn === state.userTurn).length > MAX_STEPS_PER_TURN;
      return { ...state, steps, taken, done: overLimit || taken >= this.maxTurns };
    }
    if (move.kind === 'answer') {
      const userTurn = state.userTurn + 1;
      return { ...state, userTurn, taken, done: userTurn >= entry.question.length || taken >= this.maxTurns };
    }
    return { ...state, taken, done: taken >= this.maxTurns };
  }

  private session(entry: BfclEntry, steps: readonly Step[], shared = new SharedState(this.longContextData)): Session {
    const s = new Session(entry, { shared, today: this.today });
    for (const step of steps) s.run(step.calls);
    return s;
  }

  attempt(entry: BfclEntry, steps: readonly Step[], turns: number): Attempt {
    return Array.from({ length: turns }, (_, t) => steps.filter((s) => s.userTurn === t).map((s) => s.calls));
  }

  /** BFCL's verdict on the steps taken so far (all user turns must be finished). */
  check(prompt: Prompt, state: BfclState): CheckResult {
    const e = this.entry(prompt);
    return checkAttempt(e, this.attempt(e, state.steps, state.done ? e.groundTruth.length : state.userTurn), {
      longContextData: this.longContextData,
      today: this.today,
    });
  }

  async step(state: BfclState, action: Action): Promise<StepOutcome<BfclState>> {
    if (state.done) throw new EnvError(`BFCL episode ${state.promptId} is already finished`);
    const e = this.entry(state.promptId);
    const move = this.move(action);
    const next = this.advance(state, move, e);
    let observation: string;
    if (move.kind === 'calls') observation = toolObservation(move.calls, this.session(e, state.steps).run(move.calls));
    else if (move.kind === 'answer')
      observation = next.userTurn < e.question.length ? `\nUser: ${this.userMessage(e, next.userTurn, 'prompt')}\nAssistant: ` : '';
    else
      observation = `\nSystem: that step could not be used (${move.reason}); call functions as [func(param=value)] or reply in text to finish the request.\nAssistant: `;
    const invalid = move.kind === 'invalid' ? { invalid: true, reason: move.reason } : {};
    if (!next.done) return { state: next, observation, done: false, ...invalid };
    const finished = move.kind === 'answer' && next.userTurn >= e.question.length;
    if (!finished) {
      // BFCL's forced quit (more than 20 call steps in a user turn) or the episode's step limit.
      const overLimit = move.kind === 'calls' && next.steps.filter((s) => s.userTurn === state.userTurn).length > MAX_STEPS_PER_TURN;
      return {
        state: next,
        observation,
        done: true,
        reward: 0,
        reason: overLimit ? 'step_limit' : 'turn_limit',
        ...(move.kind === 'invalid' ? { invalid: true } : {}),
      };
    }
    const verdict = checkAttempt(e, this.attempt(e, next.steps, e.groundTruth.length), { longContextData: this.longContextData, today: this.today });
    return { state: next, observation, done: true, reward: verdict.valid ? 1 : 0, reason: verdict.valid ? 'answer' : (verdict.errorType ?? 'answer') };
  }

  restore(prompt: Prompt, turns: readonly Turn[]): BfclState {
    const e = this.entry(prompt);
    return turns.reduce((state, t) => this.advance(state, this.move(t.action), e), this.reset(prompt));
  }

  /**
   * The conversation so far as OpenAI chat messages (for chat mode with tools): user messages, the
   * assistant's tool calls with ids, one `tool` message per result (re-executed from the initial
   * state, so the texts are exactly what the model saw), and assistant text for answer steps.
   */
  chatMessages(prompt: Prompt, turns: readonly Turn[]): ChatMessage[] {
    const e = this.entry(prompt);
    const messages: ChatMessage[] = [{ role: 'user', content: this.userMessage(e, 0, 'chat') }];
    const session = this.session(e, []);
    let userTurn = 0;
    turns.forEach((t, i) => {
      const calls = this.callsOf(t.action);
      if (calls) {
        const ids = calls.map((_, j) => `call_${i}_${j}`);
        messages.push({
          role: 'assistant',
          content: t.thought === '' ? null : t.thought,
          tool_calls: calls.map((c, j) => ({ id: ids[j]!, type: 'function', function: safeToolCall(c) })),
        });
        session.run(calls).forEach((r, j) => messages.push({ role: 'tool', content: r, tool_call_id: ids[j]! }));
      } else if (this.move(t.action).kind === 'answer') {
        messages.push({ role: 'assistant', content: t.action.input });
        userTurn += 1;
        if (userTurn < e.question.length) messages.push({ role: 'user', content: this.userMessage(e, userTurn, 'chat') });
      } else {
        messages.push({ role: 'assistant', content: t.thought || t.action.input });
        messages.push({ role: 'user', content: t.observation.replace(/^\nSystem: |\nAssistant: $/g, '') });
      }
    });
    return messages;
  }
}

function safeToolCall(call: string): { name: string; arguments: string } {
  try {
    return stringToToolCall(call);
  } catch {
    return { name: call.split('(')[0] ?? 'unknown', arguments: '{}' };
  }
}

/** Results as BFCL shows them to a prompt-mode model: a list of {role, name, content} dicts. */
/**
 * The most characters of one step's tool results a model is shown. BFCL sets none, and a call echoes
 * what it was given: `cd(folder='A' * 2**20)` answered a 1 MB observation, which then rode in every
 * later prompt. The largest result of BFCL's own runs of every entry is 6,839 characters
 * (test/env/bfcl/fixtures/conformance.json.gz), so the bound changes no real episode. The checker
 * reads the full results, not this text.
 */
export const BFCL_OBSERVATION_CHARS = 16384;

function toolObservation(calls: readonly string[], results: readonly string[]): string {
  const items = calls.map((c, i) =>
    dict([
      ['role', 'tool'],
      ['name', c],
      ['content', results[i]!],
    ]),
  );
  const text = pyRepr(items);
  const shown =
    text.length <= BFCL_OBSERVATION_CHARS
      ? text
      : `${text.slice(0, BFCL_OBSERVATION_CHARS)}… [tool results cut: ${text.length} characters, at most ${BFCL_OBSERVATION_CHARS} are shown]`;
  return `\nTool: ${shown}\nAssistant: `;
}

/**
 * The chat-with-tools side of a BFCL episode for an OpenAI-compatible policy: messages and tools come
 * from the environment, and a reply's tool calls (JSON arguments) become a `tool_calls` action of
 * BFCL call strings. A reply without tool calls is a text answer; tool calls whose arguments are not
 * a JSON object make the step unreadable (it ends the user turn, as an undecodable step does in BFCL).
 */
/** The part of a policy call a conversation is read from (a policy's context has at least this). */
interface ConversationPrefix {
  prompt: Prompt;
  turns: readonly Turn[];
}

export function bfclConversation(env: BfclEnv) {
  return {
    messages: (ctx: ConversationPrefix): ChatMessage[] => env.chatMessages(ctx.prompt, ctx.turns),
    tools: (ctx: ConversationPrefix): OpenAITool[] => env.tools(ctx.prompt, env.restore(ctx.prompt, ctx.turns)),
    action(reply: { content: string; toolCalls: readonly { name: string; arguments: string }[] }): { thought: string; action: Action } {
      if (reply.toolCalls.length === 0) return { thought: reply.content, action: { type: 'answer', input: reply.content } };
      try {
        const calls = reply.toolCalls.map((c) => toolCallToString(c.name, c.arguments));
        return { thought: reply.content, action: { type: 'tool_calls', input: JSON.stringify(calls) } };
      } catch (e) {
        return { thought: reply.content, action: { type: 'invalid', input: `tool_calls: ${(e as Error).message}` } };
      }
    },
  };
}

/**
 * Completion mode: read a model's text as BFCL's prompt format. A Python-style list of calls is a
 * `tool_calls` step; any other non-blank text is a reply that ends the user turn (in BFCL every text
 * that is not a call list ends the turn, so there is no "garbage" text to reject); a blank reply is
 * an invalid step. Pass it as the rollout engine's `parseAction`.
 */
export function parseBfclText(text: string): { thought: string; action: Action } {
  const step = readStepText(text);
  if ('calls' in step) return { thought: '', action: { type: 'tool_calls', input: JSON.stringify(step.calls) } };
  return { thought: step.answer, action: { type: 'answer', input: step.answer } };
}
