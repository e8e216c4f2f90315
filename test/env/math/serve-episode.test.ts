import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { MathEnv, PyodideCodeTool, loadMathDataset } from '../../../src/env/index.ts';
import { OpenAIPolicy } from '../../../src/policy/openai/index.ts';
import { runStep } from '../../../src/rollout/index.ts';
import type { TreeNode } from '../../../src/tree/index.ts';
import { createRng } from '../../../src/util/rng.ts';
import { startServe } from '../../helpers/run-cli.ts';
import { fixture, writeTemp } from '../../tinylm/fixtures.ts';

// A random-weight tiny llama written by project code (test/tinylm), served by the real `trace-rl serve`.
const file = writeTemp(fixture({ context: 4096 }, 3).model, 'tiny-math.gguf');
let child: ChildProcess;
let baseURL = '';
const tool = new PyodideCodeTool({ timeoutMs: 4000 });

before(async () => {
  ({ child, baseURL } = await startServe(file));
});

after(async () => {
  child.kill('SIGTERM');
  await tool.close();
});

for (const mode of ['completions', 'chat'] as const) {
  test(`a full math episode through trace-rl serve (${mode}): every turn parsed by the math protocol, observations from the env, ended by the turn limit or an answer`, async () => {
    const env = new MathEnv({ tool, maxTurns: 3 });
    const prompts = loadMathDataset('gsm8k', { limit: 1 });
    const policy = new OpenAIPolicy({ baseURLs: [baseURL], model: 'tiny-math', mode, stop: ['```output', '</code>', '</tool_call>'] });
    const res = await runStep({ prompts, env, policy, rng: createRng(5), rootPlan: new Map([[prompts[0]!.id, 2]]), settings: { maxTokensPerTurn: 24 } });
    const nodes = Object.values(res.trees[0]!.nodes).filter((n): n is TreeNode & { turn: NonNullable<TreeNode['turn']> } => n.turn !== undefined);
    assert.ok(nodes.length >= 2, `${nodes.length} turns`);
    for (const n of nodes) {
      assert.equal(n.turn.error, undefined, JSON.stringify(n.turn.error));
      assert.equal(typeof n.turn.text, 'string');
      // The env's parser, not Search-R1's: random text is a math-protocol invalid turn (or code / an answer).
      assert.ok(['invalid', 'python', 'answer'].includes(n.turn.action.type), n.turn.action.type);
      if (n.turn.action.type === 'invalid') assert.match(n.turn.action.input, /^(no_action|empty_code)/);
    }
    const leaves = nodes.filter((n) => n.end !== undefined);
    assert.equal(leaves.length, 2);
    for (const l of leaves) {
      assert.ok(l.end === 'answer' || l.end === 'turn_limit', l.end);
      if (l.end === 'turn_limit') assert.equal(l.depth, 3);
      assert.equal(typeof l.reward, 'number');
    }
  });
}
