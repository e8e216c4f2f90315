/**
 * Grows rollout trees for the predictor benchmark without the (separate) rollout engine: m bare
 * rollouts per prompt, then `continuations` branches from uniformly chosen intermediate prefixes, as a
 * TRACE step with random prefix choice would. Works with any Environment + Policy pair.
 */
import type { Environment } from '../../src/env/types.ts';
import type { Policy } from '../../src/policy/types.ts';
import { addTurn, createTree, endTrajectory, turnsTo, type RolloutTree, type TreeNode } from '../../src/tree/index.ts';
import type { Rng } from '../../src/util/rng.ts';
import type { Prompt } from '../../src/tree/types.ts';

export interface GrowOptions {
  m: number;
  continuations: number;
  rng: Rng;
  maxTurns: number;
}

async function rollFrom<S>(env: Environment<S>, policy: Policy, prompt: Prompt, tree: RolloutTree, fromId: string, origin: 'bare' | 'continuation', opts: GrowOptions, label: string): Promise<void> {
  const turns = turnsTo(tree, fromId);
  let state = env.restore(prompt, turns);
  let parent = fromId;
  const rendered = env.render(prompt);
  const rng = opts.rng.fork(label);
  for (let t = turns.length; ; t++) {
    const out = await policy.act({ prompt, rendered, turns, rng, maxTokens: 256 });
    const action = out.action ?? { type: 'invalid', input: out.text };
    const r = await env.step(state, action);
    const turn = { thought: out.thought ?? '', action, observation: r.observation, ...(out.entropy !== undefined ? { entropy: out.entropy } : {}) };
    const node: TreeNode = addTurn(tree, parent, turn, { origin });
    turns.push(turn);
    parent = node.id;
    state = r.state;
    if (r.done || t + 1 >= opts.maxTurns) {
      endTrajectory(tree, node.id, r.done && r.reason !== 'turn_limit' ? 'answer' : 'turn_limit', r.reward ?? 0);
      return;
    }
  }
}

export async function growTree<S>(env: Environment<S>, policy: Policy, prompt: Prompt, opts: GrowOptions): Promise<RolloutTree> {
  const tree = createTree(prompt.id, prompt.question);
  for (let j = 0; j < opts.m; j++) await rollFrom(env, policy, prompt, tree, tree.promptId, 'bare', opts, `bare:${prompt.id}:${j}`);
  const inner = Object.values(tree.nodes).filter((n) => n.parent !== null && n.end === undefined).map((n) => n.id);
  for (let k = 0; k < opts.continuations && inner.length > 0; k++) {
    const from = inner[opts.rng.int(inner.length)];
    await rollFrom(env, policy, prompt, tree, from, 'continuation', opts, `cont:${prompt.id}:${k}`);
  }
  return tree;
}
