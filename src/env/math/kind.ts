/** The math kind (env.kind math): math datasets with a Python code tool, for language-model policies. */
import { z } from 'zod';
import { envKind, kindObject } from '../kind.ts';
import type { Environment } from '../types.ts';
import { codeToolFields, toolDescription, urlError, urlNeeded } from './code-tool-settings.ts';

const math = kindObject('math', {
  math: z
    .strictObject({
      dataset: z
        .string()
        .default('gsm8k-train')
        .describe('math: training prompts: gsm8k-train, gsm8k, math500, aime24, aime25, or a JSONL file ({"question"|"problem", "answer"} per line).'),
      testDataset: z.string().default('gsm8k').describe('math: held-out prompts for evaluation (same choices as dataset).'),
      limit: z.number().int().min(1).optional().describe('math: use only the first this many prompts of each dataset.'),
      format: z
        .enum(['markdown', 'code-tag', 'tool-call'])
        .default('markdown')
        .describe('How the model writes code and sees its output: ```python / ```output fences, <code>/<interpreter>, or <tool_call>/<tool_response>.'),
      // inline runs only the math world's print(a op b) cells: refused here rather than when the run starts.
      tool: z.enum(['pyodide', 'url']).default('pyodide').describe(toolDescription),
      ...codeToolFields,
    })
    .refine(urlNeeded, urlError)
    .prefault({})
    .describe('math and math-world: datasets, code format and the code tool.'),
});

export const mathKind = envKind('math', math, {
  async build({ math: m }, { maxTurns }) {
    const [{ loadMathDataset }, { createCodeTool }, { MathEnv }] = await Promise.all([
      import('./datasets.ts'),
      import('./create-tool.ts'),
      import('./math-env.ts'),
    ]);
    // The datasets first: a file refused (a duplicate id, an empty file, a folder) is then refused before
    // the code tool starts its sandbox (the pyodide snapshot, seconds of CPU the refusal did not need).
    const test = loadMathDataset(m.testDataset, { limit: m.limit });
    const train = loadMathDataset(m.dataset, { limit: m.limit });
    const env = new MathEnv({ tool: createCodeTool(m), format: m.format, maxTurns });
    return { env: env as Environment<unknown>, train, test, heldOut: new Map([[m.testDataset, test]]) };
  },
  datasetsSetting: { path: 'env.math.testDataset', single: { example: 'math500' } },
});
