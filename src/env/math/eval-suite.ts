/**
 * Evaluation suites for the math environments, in the shape of the generic `trace-rl eval` harness
 * (`{kind, env, datasets}`, helper qa's src/eval on its branch): one environment and its held-out
 * prompts per dataset, scored by the environment's reward (accuracy). Kept structural so this module
 * does not depend on the harness; wiring is one line per kind where the harness builds its suites.
 */
import type { Prompt } from '../../tree/types.ts';
import type { CodeTool } from './code-tool.ts';
import { loadMathDataset } from './datasets.ts';
import { MathEnv } from './math-env.ts';
import type { CodeFormat } from './protocol.ts';
import { MathWorldEnv } from './world/math-world-env.ts';

export interface MathEvalSuite {
  kind: 'math' | 'math-world';
  env: MathEnv;
  datasets: Map<string, Prompt[]>;
}

/** `math`: each named dataset (gsm8k, math500, aime24, aime25, or JSONL paths) as its own table row. */
export function mathEvalSuite(options: { datasets: readonly string[]; tool: CodeTool; format?: CodeFormat; maxTurns?: number; limit?: number }): MathEvalSuite {
  const env = new MathEnv({ tool: options.tool, format: options.format, maxTurns: options.maxTurns });
  const datasets = new Map(options.datasets.map((d) => [d, loadMathDataset(d, { limit: options.limit })] as const));
  return { kind: 'math', env, datasets };
}

/** `math-world`: the world's test split, one row per difficulty (number of steps). */
export function mathWorldEvalSuite(options: { seed: number; tool: CodeTool; problems?: number; testFraction?: number; maxTurns?: number }): MathEvalSuite {
  const env = new MathWorldEnv(options);
  const datasets = new Map<string, Prompt[]>();
  for (const p of env.test) {
    const key = `math-world-${p.meta!.steps as number}step`;
    datasets.set(key, [...(datasets.get(key) ?? []), p]);
  }
  return { kind: 'math-world', env, datasets: new Map([...datasets].sort(([a], [b]) => a.localeCompare(b))) };
}
