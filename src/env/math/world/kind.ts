/** The math-world kind (env.kind math-world): synthetic multi-step word problems for the embedded policy. */
import { z } from 'zod';
import { groupBy, seed, testFraction } from '../../kind-fields.ts';
import { envKind, kindObject } from '../../kind.ts';
import type { CandidateSource, Environment } from '../../types.ts';
import { codeToolFields, toolDescription, urlError, urlNeeded } from '../code-tool-settings.ts';

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

export const mathWorldKind = envKind('math-world', mathWorld, {
  async build(s, { maxTurns }) {
    const [{ createCodeTool }, { InlineArithmeticTool }, { MathWorldEnv, worldCandidates }, { mathCellFeatures }] = await Promise.all([
      import('../create-tool.ts'),
      import('./inline-tool.ts'),
      import('./math-world-env.ts'),
      import('./features.ts'),
    ]);
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
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut, candidates, features: mathCellFeatures };
  },
  equalTokenBudget: () => 6_000,
  notForLanguageModels: 'env.kind math-world is for the embedded or scripted policy; use env.kind math for a language model',
});
