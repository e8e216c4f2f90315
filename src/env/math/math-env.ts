/**
 * Tool-integrated math reasoning as a multi-turn environment. Each turn the model writes reasoning and
 * either a code block (action `python`: the code tool runs it and its output, wrapped the way the
 * protocol expects, is the observation) or a final answer in `\boxed{}` (action `answer`: the episode
 * ends with reward 1 when the grader finds it equivalent to a gold answer, else 0). A turn with neither
 * is invalid: it costs a turn and is answered with the rule it broke. At the turn limit the episode
 * ends with reward 0 (a code turn at the limit is not run). When the sandbox itself fails (HTTP
 * errors after retries, a crashed worker) `step` throws, so the rollout engine records a tool_error
 * and retries. When the code tool could not replay the trajectory's earlier cells within its bound
 * (`replay_limit`), the episode ends with reward 0 and reason replay_limit. States are frozen values holding the (action, observation) history, so `restore`
 * rebuilds them from recorded turns without running code again. A code cell runs after the earlier
 * cells of its own trajectory (its path in the tree), like a notebook's.
 */
import type { Action, Turn } from '../../tree/types.ts';
import { EnvError } from '../errors.ts';
import type { Environment, StepOutcome } from '../types.ts';
import type { Prompt } from '../../tree/types.ts';
import type { RolloutTree } from '../../tree/types.ts';
import { endedByReplayLimit, formatObservation, leavesState, type CodeTool } from './code-tool.ts';
import { answersMatch } from './grader.ts';
import { CODE_ACTION, createProtocol, type CodeFormat, type CodeProtocol } from './protocol.ts';

export interface MathEnvOptions {
  tool: CodeTool;
  /** How code is written and output shown (see protocol.ts). Default 'markdown'. */
  format?: CodeFormat;
  /** Turn limit (code turns + the answer turn). Default 4. */
  maxTurns?: number;
  name?: string;
}

export interface MathStep {
  readonly action: Action;
  readonly observation: string;
  /** The cell this step ran, when it left state for the trajectory's later cells. */
  readonly cell?: string;
}

export interface MathState {
  readonly prompt: Prompt;
  readonly turn: number;
  readonly steps: readonly MathStep[];
  readonly done: boolean;
  readonly reward?: number;
  readonly reason?: string;
}

/** The earlier cells of the trajectory that left state: the code tool runs a new cell after them. */
function cellsOf(state: MathState): string[] {
  return state.steps.flatMap((s) => (s.cell === undefined ? [] : [s.cell]));
}

function ranCell(action: Action, observation: string): MathStep {
  return leavesState(observation) ? { action, observation, cell: action.input } : { action, observation };
}

const TURN_LIMIT_OBSERVATION = '\nTurn limit reached; the episode ends without an answer.\n';

export class MathEnv implements Environment<MathState> {
  readonly name: string;
  readonly maxTurns: number;
  readonly tool: CodeTool;
  readonly protocol: CodeProtocol;

  constructor(options: MathEnvOptions) {
    this.tool = options.tool;
    this.protocol = createProtocol(options.format ?? 'markdown');
    this.maxTurns = options.maxTurns ?? 4;
    this.name = options.name ?? `math:${this.protocol.format}:${this.tool.name}`;
    if (this.maxTurns < 1) throw new EnvError(`${this.name}: maxTurns must be ≥ 1`);
  }

  render(prompt: Prompt): string {
    return `Solve the problem below. Think step by step. ${this.protocol.instructions()} You have at most ${this.maxTurns} turns.\nProblem: ${prompt.question}\n`;
  }

  parse(text: string): { thought: string; action: Action } {
    return this.protocol.parse(text);
  }

  reset(prompt: Prompt): MathState {
    if (prompt.answers.length === 0) throw new EnvError(`${this.name}: prompt ${prompt.id} has no gold answer`);
    return Object.freeze({ prompt, turn: 0, steps: Object.freeze([]), done: false });
  }

  async step(state: MathState, action: Action, options: { signal?: AbortSignal } = {}): Promise<StepOutcome<MathState>> {
    const pre = this.advance(state, action);
    if (pre) return pre;
    const result = await this.tool.run(action.input, { ...options, history: cellsOf(state) });
    if (result.status === 'sandbox_error') throw new EnvError(`${this.name}: ${result.error ?? 'code sandbox failed'}`);
    return this.ran(state, action, this.protocol.wrap(formatObservation(result)));
  }

  /**
   * Trajectories of the step's trees that ended because replaying their code history passed the tool's
   * bound (metric code_replay_limited): read from the leaves' observations, so trajectories run by
   * worker processes count too.
   */
  treeMetrics(trees: readonly RolloutTree[]): Record<string, number> {
    let ended = 0;
    for (const tree of trees)
      for (const node of Object.values(tree.nodes)) if (node.end !== undefined && node.turn !== undefined && endedByReplayLimit(node.turn.observation)) ended++;
    return { code_replay_limited: ended };
  }

  /** A code turn's outcome from its observation: the trajectory goes on, or it ends at the replay limit (live and restored alike). */
  private ran(state: MathState, action: Action, observation: string): StepOutcome<MathState> {
    if (endedByReplayLimit(observation)) return this.next(state, { action, observation }, { reward: 0, reason: 'replay_limit' });
    return this.next(state, ranCell(action, observation));
  }

  restore(prompt: Prompt, turns: readonly Turn[]): MathState {
    let s = this.reset(prompt);
    for (const [i, t] of turns.entries()) {
      if (s.done) throw new EnvError(`${this.name}: turn ${i + 1} of ${prompt.id} follows the end of the episode`);
      s = (this.advance(s, t.action) ?? this.ran(s, t.action, t.observation)).state;
    }
    return s;
  }

  /** Everything except running code: invalid turns, answers and the turn limit (undefined = run the code). */
  private advance(state: MathState, action: Action): StepOutcome<MathState> | undefined {
    if (state.done) throw new EnvError(`${this.name}: step called on a finished episode (${state.prompt.id})`);
    const atLimit = state.turn + 1 >= this.maxTurns;
    if (action.type === 'answer' && action.input.trim().length > 0) {
      const correct = state.prompt.answers.some((g) => answersMatch(g, action.input));
      return this.next(state, { action, observation: '' }, { reward: correct ? 1 : 0, reason: 'answer' });
    }
    const bad =
      action.type === CODE_ACTION
        ? action.input.trim()
          ? undefined
          : 'empty_code: the code block is empty'
        : action.type === 'answer'
          ? 'empty_answer: the \\boxed{} answer is empty'
          : action.type === 'invalid'
            ? action.input
            : `unknown_tool: "${action.type}" is not a tool here; the tool is ${CODE_ACTION}`;
    if (atLimit) return this.next(state, { action, observation: TURN_LIMIT_OBSERVATION }, { reward: 0, reason: 'turn_limit' }, bad !== undefined);
    if (bad !== undefined) {
      const [rule, ...rest] = bad.split(':');
      return { ...this.next(state, { action, observation: `\nInvalid turn (${rule}):${rest.join(':')}\n` }), invalid: true, reason: rule };
    }
    return undefined;
  }

  private next(state: MathState, step: MathStep, end?: { reward: number; reason: string }, invalid = false): StepOutcome<MathState> {
    const steps = Object.freeze([...state.steps, Object.freeze(step)]);
    const s: MathState = Object.freeze({ prompt: state.prompt, turn: state.turn + 1, steps, done: end !== undefined, ...(end ?? {}) });
    return {
      state: s,
      observation: step.observation,
      done: end !== undefined,
      ...(end ? { reward: end.reward, score: end.reward, reason: end.reason } : {}),
      ...(invalid ? { invalid: true } : {}),
    };
  }
}
