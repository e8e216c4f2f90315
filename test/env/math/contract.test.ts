/** The math environments pass the shared Environment contract (test/contracts/environment.ts). */
import { InlineArithmeticTool, MathEnv, MathWorldEnv, loadMathDataset, type CodeTool } from '../../../src/env/index.ts';
import { ScriptedMathWorldPolicy, type Policy } from '../../../src/policy/index.ts';
import { environmentContract } from '../../contracts/environment.ts';

/** The in-process tool with a call counter (restore must make no tool calls). */
function counting(): { tool: CodeTool; calls: () => number } {
  const inner = new InlineArithmeticTool();
  let n = 0;
  return { tool: { name: 'inline-counted', run: (c) => (n++, inner.run(c)), close: () => inner.close() }, calls: () => n };
}

const world = counting();
const worldEnv = new MathWorldEnv({ seed: 4, problems: 60, tool: world.tool });
environmentContract('math-world', {
  make: () => new MathWorldEnv({ seed: 4, problems: 60, tool: world.tool }),
  prompts: worldEnv.test.slice(0, 6),
  policy: new ScriptedMathWorldPolicy({ noise: 0.5 }),
  toolCalls: world.calls,
});

// The math environment on real GSM8K problems, with a policy that writes text in the markdown protocol:
// a random arithmetic cell or a boxed guess (the env's parser reads it). The in-process tool runs the
// cells (pyodide is covered in code-tool.test.ts; loading it here too would double the file's cost).
const gsm = counting();
const textPolicy: Policy = {
  name: 'random-math-text',
  async act(ctx) {
    const r = ctx.rng.next();
    const text =
      r < 0.15
        ? 'I am not sure.'
        : r < 0.6
          ? `Compute:\n\`\`\`python\nprint(${ctx.rng.int(50)} * ${ctx.rng.int(9)})\n\`\`\``
          : `So \\boxed{${ctx.rng.int(30)}}`;
    return { text, generatedTokens: 8 };
  },
};
environmentContract('math (gsm8k, markdown)', {
  make: () => new MathEnv({ tool: gsm.tool, maxTurns: 4 }),
  prompts: loadMathDataset('gsm8k', { limit: 6 }),
  policy: textPolicy,
  toolCalls: gsm.calls,
});
