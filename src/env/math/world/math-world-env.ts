/**
 * The math world as a trainable environment for the embedded policy: generated word problems
 * (problems.ts) run through the math environment (markdown protocol), and `candidates`, the choice
 * set at a prefix: one code cell `print(v op n)` per operation and number of the text, where v is the
 * running value (the last printed result, or the starting quantity), plus answering v. A correct
 * solution of an s-step problem takes s code turns and one answer turn.
 */
import type { Prompt } from '../../../tree/types.ts';
import type { Turn } from '../../../tree/types.ts';
import type { CodeTool } from '../code-tool.ts';
import { MathEnv } from '../math-env.ts';
import { CODE_ACTION } from '../protocol.ts';
import { generateMathWorld, mathWorldMeta, mathWorldPrompt, type WorldOp } from './problems.ts';

export interface MathWorldOptions {
  seed: number;
  /** Problems generated in all (before the split). Default 1200. */
  problems?: number;
  /** Share held out for test. Default 0.2. */
  testFraction?: number;
  /** Default 6: a 4-step problem needs 5 turns. */
  maxTurns?: number;
  tool: CodeTool;
}

export interface MathWorldCandidates {
  code: Array<{ op: WorldOp; operand: number; input: string }>;
  answer: string;
}

export const WORLD_OPS: readonly WorldOp[] = ['+', '-', '*', '//'];

/** The running value after `turns`: the last integer a code cell printed, else the starting quantity. */
export function runningValue(prompt: Prompt, turns: readonly Turn[]): number {
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.action.type !== CODE_ACTION) continue;
    const m = /(-?\d+)\s*\n```\s*$/.exec(t.observation);
    if (m) return Number(m[1]);
  }
  return mathWorldMeta(prompt).numbers[0]!;
}

export function worldCandidates(prompt: Prompt, turns: readonly Turn[]): MathWorldCandidates {
  const { numbers } = mathWorldMeta(prompt);
  const v = runningValue(prompt, turns);
  const operands = [...new Set(numbers.slice(1))];
  const code = operands.flatMap((n) => WORLD_OPS.map((op) => ({ op, operand: n, input: `print(${v} ${op} ${n})` })));
  return { code, answer: String(v) };
}

export class MathWorldEnv extends MathEnv {
  readonly train: Prompt[];
  readonly test: Prompt[];

  constructor(options: MathWorldOptions) {
    super({ tool: options.tool, format: 'markdown', maxTurns: options.maxTurns ?? 6, name: `math-world-${options.seed}` });
    const all = generateMathWorld(options.seed, options.problems ?? 1200).map(mathWorldPrompt);
    const nTest = Math.max(1, Math.round(all.length * (options.testFraction ?? 0.2)));
    this.test = all.slice(0, nTest);
    this.train = all.slice(nTest);
  }
}
