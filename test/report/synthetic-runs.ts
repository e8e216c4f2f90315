/**
 * Synthetic but plausible run folders for the report tests, made without training so that the report
 * can be tested on many strategies, seeds and steps in a moment: real RunStore folders (real SQLite)
 * whose steps hold metrics (src/record/metrics.ts keys), trees and details typed by the loop's own
 * schema (src/record/step-details.ts). Outcomes are drawn from a seeded Rng: each prompt has a hidden
 * success probability that grows with the step, and the stored Ṽ is a noisy view of it.
 */
import { RunStore } from '../../src/store/index.ts';
import { stepDetailsSchema, type StepDetails } from '../../src/record/step-details.ts';
import { addTurn, createTree, endTrajectory, isMixed, rewardedLeaves, targets } from '../../src/tree/index.ts';
import type { RolloutTree, TreeNode } from '../../src/tree/types.ts';
import { createRng, type Rng } from '../../src/util/rng.ts';
import { repeatChance } from '../../src/allocate/index.ts';

export interface SyntheticRunOptions {
  dir: string;
  strategy: string;
  seed: number;
  steps: number;
  prompts: number;
  /** Leave out details (allocation, reliability) to test the report's fallbacks. */
  bareDetails?: boolean;
  /** Config without strategy.name. */
  noStrategyName?: boolean;
  /** config.arm: the label the report groups by (several arms of one strategy). */
  arm?: string;
}

const TURN_TOKENS = 30;

function turn(rng: Rng, depth: number, last: boolean, prompt: number) {
  const type = last ? 'answer' : 'search';
  return {
    thought: `Step ${depth}: I should ${last ? 'answer' : 'look up the next hop'} for question ${prompt}.`,
    action: { type, input: last ? `entity-${rng.int(5)}` : `who founded company ${prompt}-${depth}` },
    observation: last ? '' : `Doc ${rng.int(100)}: Company ${prompt}-${depth} was founded by Person ${rng.int(9)} in ${1900 + rng.int(120)}.`,
    generatedTokens: TURN_TOKENS,
  };
}

function clamp01(x: number): number {
  return Math.min(0.98, Math.max(0.02, x));
}

/** Adds a trajectory of `length` turns below `from` and ends it with a Bernoulli(p) reward. */
function rollout(
  tree: RolloutTree,
  from: TreeNode,
  length: number,
  p: number,
  rng: Rng,
  origin: 'bare' | 'continuation',
  prompt: number,
  predict: (d: number) => number,
): TreeNode {
  let node = from;
  for (let d = from.depth + 1; d <= length; d++) {
    node = addTurn(tree, node.id, turn(rng, d, d === length, prompt), { origin });
    if (d < length) node.predicted = predict(d);
  }
  endTrajectory(tree, node.id, 'answer', rng.next() < p ? 1 : 0, rng.next());
  return node;
}

export interface SyntheticRun {
  dir: string;
  /** What was written, to compare against the report. */
  steps: Array<{ step: number; metrics: Record<string, number> }>;
}

export function writeSyntheticRun(o: SyntheticRunOptions): SyntheticRun {
  const rng = createRng(o.seed).fork(o.strategy);
  const isTrace = o.strategy !== 'grpo';
  const config = o.noStrategyName
    ? { seed: o.seed }
    : { strategy: { name: o.strategy }, seed: o.seed, budget: { unit: 'trajectories' }, ...(o.arm ? { arm: o.arm } : {}) };
  const store = RunStore.create(o.dir, config);
  const written: SyntheticRun['steps'] = [];
  const cum = { trajectories: 0, turns: 0, tokens: 0 };
  for (let step = 0; step < o.steps; step++) {
    const trees: RolloutTree[] = [];
    const roots: Record<string, number> = {};
    const byDepth: Record<string, number> = {};
    let bare = 0;
    let cont = 0;
    let turns = 0;
    const calib: Record<'root' | 'prefix', Array<{ q: number; y: number }>> = { root: [], prefix: [] };
    for (let i = 0; i < o.prompts; i++) {
      const promptId = `q${step}-${i}`;
      const p = clamp01(0.1 + (0.6 * i) / o.prompts + step * (isTrace ? 0.03 : 0.02) + (rng.next() - 0.5) * 0.1);
      const noisy = () => clamp01(p + (rng.next() - 0.5) * 0.3);
      const tree = createTree(
        promptId,
        i === 0 ? `Who founded the company that made <b>"X" & Y</b></script>? (question ${i})` : `Which person founded the company in question ${i}?`,
      );
      const rootNode = tree.nodes[promptId];
      rootNode.predicted = noisy();
      // Equal cost: 4 trajectories per prompt for both; TRACE spends some of them on continuations.
      const m = isTrace ? 2 + rng.int(2) : 4;
      roots[promptId] = m;
      const bareLeaves: TreeNode[] = [];
      for (let j = 0; j < m; j++) {
        const len = 2 + rng.int(3);
        bareLeaves.push(rollout(tree, rootNode, len, p, rng, 'bare', i, noisy));
        bare++;
        turns += len;
      }
      if (isTrace) {
        // Expand the 4 − m lowest-ρ prefixes by one continuation each, as a greedy solver would.
        const prefixes = Object.values(tree.nodes).filter((n) => n.parent !== null && n.children.length > 0 && n.predicted !== undefined);
        const scored = prefixes.map((n) => {
          let leaf = n;
          while (leaf.children.length) leaf = tree.nodes[leaf.children[0]];
          return { n, rho: repeatChance(n.predicted!, leaf.reward ?? 0), length: leaf.depth };
        });
        scored.sort((a, b) => a.rho - b.rho);
        for (const { n, length } of scored.slice(0, 4 - m)) {
          n.expanded = 1;
          rollout(tree, n, length, p, rng, 'continuation', i, noisy);
          cont++;
          turns += length - n.depth;
          byDepth[String(n.depth)] = (byDepth[String(n.depth)] ?? 0) + 1;
        }
      }
      const t = targets(tree);
      for (const n of Object.values(tree.nodes)) {
        const target = t.get(n.id);
        if (n.predicted === undefined || !target) continue;
        (n.parent === null ? calib.root : calib.prefix).push({ q: n.predicted, y: target.target });
      }
      trees.push(tree);
    }
    const rewards = trees.flatMap((t) => rewardedLeaves(t).map((l) => l.reward!));
    const bareRewards = trees.flatMap((t) =>
      rewardedLeaves(t)
        .filter((l) => l.origin === 'bare')
        .map((l) => l.reward!),
    );
    const tokens = turns * TURN_TOKENS;
    cum.trajectories += bare + cont;
    cum.turns += turns;
    cum.tokens += tokens;
    const metrics: Record<string, number> = {
      effective_ratio: trees.filter((t) => isMixed(t)).length / trees.length,
      prompts: trees.length,
      expanded_prefixes: cont,
      reward_mean: mean(rewards),
      bare_reward_mean: mean(bareRewards),
      cost_trajectories: bare + cont,
      cost_bare: bare,
      cost_continuations: cont,
      cost_turns: turns,
      cost_tokens: tokens,
      cost_tool_calls: turns - bare - cont,
      cum_trajectories: cum.trajectories,
      cum_turns: cum.turns,
      cum_tokens: cum.tokens,
      time_allocate_ms: 5 + rng.int(5),
      time_rollout_ms: 200 + rng.int(50),
      time_predictor_ms: isTrace ? 40 + rng.int(10) : 0,
      time_policy_ms: 120 + rng.int(30),
      time_step_ms: 400 + rng.int(20),
    };
    if (step % 2 === 1 || step === o.steps - 1) {
      metrics.test_accuracy = clamp01(0.2 + step * (isTrace ? 0.06 : 0.04) + (rng.next() - 0.5) * 0.04);
      metrics.time_eval_ms = 30;
    }
    const spend = { bare, continuation: cont, turns, tokens, toolCalls: turns - bare - cont };
    const details: Pick<StepDetails, 'spend'> | StepDetails = o.bareDetails
      ? { spend }
      : stepDetailsSchema.parse({
          spend,
          rounds: 1,
          failures: {},
          allocation: { roots, continuationsByDepth: byDepth },
          reliability: { root: reliability(calib.root), prefix: reliability(calib.prefix) },
        } satisfies StepDetails);
    store.writeStep({ step, metrics, details, trees, checkpoints: {} });
    written.push({ step, metrics });
  }
  store.markFinished();
  store.close();
  return { dir: o.dir, steps: written };
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Five equal-width bins of Ṽ with the mean prediction and mean target in each. */
function reliability(points: Array<{ q: number; y: number }>) {
  const out = [];
  for (let b = 0; b < 5; b++) {
    const lo = b / 5;
    const hi = (b + 1) / 5;
    const inBin = points.filter((p) => p.q >= lo && (p.q < hi || (b === 4 && p.q <= hi)));
    if (inBin.length === 0) continue;
    out.push({ lo, hi, meanPredicted: mean(inBin.map((p) => p.q)), observed: mean(inBin.map((p) => p.y)), count: inBin.length });
  }
  return out;
}
