import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedMathWorldPolicy } from '../../../src/policy/index.ts';
import { InlineArithmeticTool, MathEnv, MathWorldEnv, evaluateCell, generateMathWorld, worldCandidates, applyOp } from '../../../src/env/index.ts';
import { runStep } from '../../../src/rollout/index.ts';
import { buildComponents, parseTrainConfig } from '../../../src/train/index.ts';
import { createRng } from '../../../src/util/rng.ts';
import { fixedAllocator } from '../../rollout/helpers.ts';

const env = new MathWorldEnv({ seed: 3, problems: 200, tool: new InlineArithmeticTool() });

describe('math world', () => {
  test('problems: 1–4 steps, integer answers that replay from their programs, numbers stated in the text in order', () => {
    const problems = generateMathWorld(3, 200);
    assert.deepEqual(new Set(problems.map((p) => p.ops.length)), new Set([1, 2, 3, 4]));
    for (const p of problems) {
      let v = p.numbers[0]!;
      p.ops.forEach((op, i) => (v = applyOp(op, v, p.numbers[i + 1]!)));
      assert.equal(v, p.answer);
      assert.ok(Number.isInteger(v) && v >= 0, p.question);
      assert.deepEqual(p.question.match(/\d+/g)!.map(Number), p.numbers, p.question);
    }
    assert.deepEqual(generateMathWorld(3, 5), problems.slice(0, 5), 'seeded');
  });

  test("the inline tool has Python semantics for the world's cells and refuses anything else", async () => {
    assert.equal(evaluateCell('print(-7 // 2)'), -4n);
    assert.equal(evaluateCell('print(7 // -2)'), -4n);
    assert.equal(evaluateCell('print(99999999999 * 99999999999)'), 9999999999800000000001n);
    assert.equal((await new InlineArithmeticTool().run('import os')).status, 'error');
  });

  test('greedy scripted policy solves every problem in s code turns + 1 answer; candidates always contain the gold cell', async () => {
    const policy = new ScriptedMathWorldPolicy();
    for (const prompt of env.test.slice(0, 40)) {
      let state = env.reset(prompt);
      const turns = [];
      for (;;) {
        const out: import('../../../src/policy/index.ts').PolicyOutput = await policy.act({
          prompt,
          rendered: env.render(prompt),
          turns,
          rng: createRng(1),
          greedy: true,
          maxTokens: 100,
        });
        const o = await env.step(state, out.action!);
        turns.push({ thought: out.thought ?? '', action: out.action!, observation: o.observation });
        state = o.state;
        if (o.done) {
          assert.equal(o.reward, 1, prompt.question);
          assert.equal(turns.length, (prompt.meta!.steps as number) + 1);
          break;
        }
        assert.ok(worldCandidates(prompt, turns).code.length >= 4);
      }
    }
  });

  test('trees with prefix expansion: continuations restart from intermediate prefixes and give mixed outcomes', async () => {
    const prompts = env.train.filter((p) => (p.meta!.steps as number) >= 3).slice(0, 6);
    const res = await runStep({
      prompts,
      env,
      policy: new ScriptedMathWorldPolicy({ noise: 0.5 }),
      rng: createRng(11),
      strategy: fixedAllocator(3, 3, 2),
      settings: { maxTurns: 6 },
    });
    let continuations = 0;
    let mixed = 0;
    for (const tree of res.trees) {
      const nodes = Object.values(tree.nodes);
      const cont = nodes.filter((n) => n.origin === 'continuation');
      continuations += cont.length;
      for (const c of cont) assert.ok(tree.nodes[c.parent!]!.depth >= 1, 'a continuation hangs below an intermediate prefix');
      const rewards = new Set(nodes.filter((n) => n.reward !== undefined).map((n) => n.reward));
      if (rewards.size === 2) mixed++;
    }
    assert.ok(continuations > 0, 'prefixes were expanded');
    assert.ok(mixed > 0, 'some trees hold both outcomes');
  });

  test('buildComponents: env.kind math-world gives the embedded policy code-cell candidates; scripted is fixed', async () => {
    const c = await buildComponents(parseTrainConfig({ env: { kind: 'math-world', math: { problems: 50 } } }));
    assert.ok(c.trainable);
    const out = await c.policy.act({ prompt: c.train[0]!, rendered: '', turns: [], rng: createRng(2), maxTokens: 64 });
    assert.ok(out.action!.type === 'python' || out.action!.type === 'answer');
    const s = await buildComponents(parseTrainConfig({ env: { kind: 'math-world' }, policy: { kind: 'scripted' } }));
    assert.equal(s.trainable, undefined);
    // The url tool: the refusal does not depend on the tool, and a pyodide one would start loading Python.
    await assert.rejects(
      buildComponents(parseTrainConfig({ env: { kind: 'math', math: { tool: 'url', url: 'http://127.0.0.1:9' } } })),
      /needs a policy that writes text/,
    );
  });
});

test('held-out rows: math-world per difficulty, math per dataset (the environment registry)', async () => {
  const { buildEnvironment } = await import('../../../src/train/environments.ts');
  const w = await buildEnvironment(parseTrainConfig({ seed: 3, env: { kind: 'math-world', math: { problems: 200 } } }));
  assert.deepEqual([...w.heldOut.keys()], ['math-world-1step', 'math-world-2step', 'math-world-3step', 'math-world-4step'], 'one row per difficulty');
  assert.equal(
    [...w.heldOut.values()].reduce((a, d) => a + d.length, 0),
    w.test.length,
    'every held-out problem in one row',
  );
  const m = await buildEnvironment(parseTrainConfig({ env: { kind: 'math', math: { testDataset: 'aime24' } } }));
  assert.deepEqual(
    [...m.heldOut].map(([k, v]) => [k, v.length]),
    [['aime24', 30]],
    'the math test dataset as its row',
  );
  // Its code tool began loading Python when it was built; closing it stops that (CPU this test has no use for).
  await (m.env as MathEnv).tool.close();
});
