import type { PromptOutcome } from '../allocate/index.ts';
import type { BudgetUnit, Spend } from '../budget/index.ts';
import type { QualityMetrics, ReliabilityBin, StepQuality } from '../predict/index.ts';
import { isMixed, rewardedLeaves, root, walk } from '../tree/index.ts';
import type { RolloutTree } from '../tree/types.ts';
import type { StepDetails, StoredBin } from '../record/step-details.ts';
import type { StepResult } from '../rollout/index.ts';
import type { ServerLoad } from '../env/types.ts';

/** Contrast and reward metrics of one step's trees (keys documented in metrics.ts). */
export function contrastMetrics(trees: readonly RolloutTree[]): Record<string, number> {
  let prompts = 0;
  let mixedPrompts = 0;
  let anchors = 0;
  let mixedAnchors = 0;
  let expanded = 0;
  let rewardSum = 0;
  let rewardCount = 0;
  let bareSum = 0;
  let bareCount = 0;
  for (const tree of trees) {
    const r = root(tree);
    if (r.children.length === 0) continue;
    prompts++;
    if (isMixed(tree)) mixedPrompts++;
    if (r.children.length >= 2) {
      anchors++;
      if (isMixed(tree)) mixedAnchors++;
    }
    walk(tree, tree.promptId, (n) => {
      if (n.parent !== null && (n.expanded ?? 0) > 0) {
        expanded++;
        anchors++;
        if (isMixed(tree, n.id)) mixedAnchors++;
      }
    });
    for (const leaf of rewardedLeaves(tree)) {
      rewardSum += leaf.reward!;
      rewardCount++;
      // A leaf is bare when its whole path was made by one bare rollout (no continuation node on it).
      if (leaf.origin === 'bare') {
        bareSum += leaf.reward!;
        bareCount++;
      }
    }
  }
  return {
    effective_ratio: prompts > 0 ? mixedPrompts / prompts : 0,
    mixed_prompts: mixedPrompts,
    mixed_anchor_yield: anchors > 0 ? mixedAnchors / anchors : 0,
    prompts,
    expanded_prefixes: expanded,
    reward_mean: rewardCount > 0 ? rewardSum / rewardCount : 0,
    bare_reward_mean: bareCount > 0 ? bareSum / bareCount : 0,
  };
}

/**
 * Replay metrics of a server environment's step (none for an environment whose restore calls no tool,
 * so in-process runs log exactly what they did before).
 */
export function replayMetrics(env: { restoreCost?: unknown }, r: Pick<StepResult, 'replayCost' | 'replayMismatches'>): Record<string, number> {
  if (env.restoreCost === undefined) return {};
  return {
    replay_restores: r.replayCost.restores,
    replay_steps: r.replayCost.steps,
    replay_ms: r.replayCost.ms,
    replay_mismatches: Object.values(r.replayMismatches.byPrompt).reduce((a, b) => a + b, 0),
  };
}

/**
 * A server environment's load this step (env.serverLoad, read once by the step): how prefixes were
 * restored (forks, fallbacks), failovers and connection failures; and the environment steps sent for
 * trajectories and sent again by replays, the sessions reset and the time spent in its calls (rollout
 * workers' included: StepResult.partsLoad). None for an in-process environment.
 */
export function serverLoadMetrics(load: ServerLoad | undefined): Record<string, number> {
  if (!load) return {};
  return {
    restore_forks: load.forks,
    restore_fork_fallbacks: load.forkFallbacks,
    env_failovers: load.failovers,
    env_server_failures: load.servers.reduce((a, s) => a + s.failures, 0),
    env_steps: load.steps,
    env_replayed_steps: load.replayedSteps,
    env_resets: load.resets,
    env_ms: load.ms,
  };
}

/** details.servers: each server's load this step and how prefixes were restored (undefined for other environments). */
export function serverLoadDetails(load: ServerLoad | undefined): StepDetails['servers'] {
  if (!load) return undefined;
  return { restoreMethod: load.restoreMethod, forks: load.forks, forkFallbacks: load.forkFallbacks, failovers: load.failovers, byServer: load.servers };
}

/** details.replay of a server environment's step (undefined otherwise). */
export function replayDetails(env: { restoreCost?: unknown }, r: Pick<StepResult, 'replayCost' | 'replayMismatches'>): StepDetails['replay'] {
  if (env.restoreCost === undefined) return undefined;
  const { first } = r.replayMismatches;
  return { mismatches: { ...r.replayMismatches.byPrompt }, ...(first !== undefined ? { first } : {}), ...r.replayCost };
}

export function costMetrics(spend: Spend): Record<string, number> {
  return {
    cost_trajectories: spend.bare + spend.continuation,
    cost_bare: spend.bare,
    cost_continuations: spend.continuation,
    cost_turns: spend.turns,
    cost_tokens: spend.tokens,
    cost_tool_calls: spend.toolCalls,
  };
}

/** Predictor quality on the step's nodes, measured before training on them (NaN-free: absent when undefined). */
export function predictorMetrics(q: StepQuality): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (key: string, x: number) => {
    if (Number.isFinite(x)) out[key] = x;
  };
  const one = (prefix: string, m: QualityMetrics) => {
    if (m.nodes === 0) return;
    put(`${prefix}_brier`, m.brier);
    put(`${prefix}_auroc`, m.auroc);
  };
  one('pred_root', q.root);
  one('pred_prefix', q.prefix);
  return out;
}

/** Where the budget went: bare rollouts per prompt and continuations by the depth of their prefix. */
export function allocationDetails(trees: readonly RolloutTree[]): { roots: Record<string, number>; continuationsByDepth: Record<string, number> } {
  const roots: Record<string, number> = {};
  const continuationsByDepth: Record<string, number> = {};
  for (const tree of trees) {
    roots[tree.promptId] = root(tree).children.filter((c) => tree.nodes[c].origin === 'bare').length;
    walk(tree, tree.promptId, (n) => {
      if (n.parent !== null && (n.expanded ?? 0) > 0) continuationsByDepth[n.depth] = (continuationsByDepth[n.depth] ?? 0) + n.expanded!;
    });
  }
  return { roots, continuationsByDepth };
}

/** Reliability bins as stored in `details.reliability` (and read by the report): empty bins dropped. */
export function storedBins(bins: readonly ReliabilityBin[]): StoredBin[] {
  return bins.filter((b) => b.count > 0).map((b) => ({ lo: b.lo, hi: b.hi, meanPredicted: b.meanPredicted, observed: b.observedRate, count: b.count }));
}

/** Each prompt's outcome as an adaptive strategy reads it: mixed or not, and its tree's cost in the budget's unit. */
export function promptOutcomes(trees: readonly RolloutTree[], unit: BudgetUnit): PromptOutcome[] {
  return trees
    .filter((t) => root(t).children.length > 0)
    .map((tree) => {
      let cost = 0;
      walk(tree, tree.promptId, (n) => {
        if (n.parent === null) return;
        if (unit === 'trajectories') cost += n.children.length === 0 ? 1 : 0;
        else if (unit === 'turns') cost += 1;
        else cost += n.turn?.generatedTokens ?? 0;
      });
      return { promptId: tree.promptId, mixed: isMixed(tree), cost };
    });
}
