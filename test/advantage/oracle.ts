/**
 * Plain-loop oracles: each estimator recomputed from explicit lists of leaf rewards, with no shared
 * code from src/advantage (no merged statistics, no index arrays). Slow and obvious on purpose.
 */
import type { ForestNode } from '../../src/advantage/index.ts';

interface Plain {
  parentOf: Map<string, string | null>;
  kids: Map<string, string[]>;
  reward: Map<string, number>;
  length: Map<string, number>;
}

function plain(nodes: readonly ForestNode[]): Plain {
  const parentOf = new Map<string, string | null>();
  const kids = new Map<string, string[]>();
  const reward = new Map<string, number>();
  const length = new Map<string, number>();
  for (const n of nodes) {
    parentOf.set(n.id, n.parent);
    kids.set(n.id, kids.get(n.id) ?? []);
    if (n.parent !== null) kids.set(n.parent, [...(kids.get(n.parent) ?? []), n.id]);
    if (n.reward !== undefined) reward.set(n.id, n.reward);
  }
  for (const n of nodes) if ((kids.get(n.id) ?? []).length === 0) length.set(n.id, n.length ?? 1);
  return { parentOf, kids, reward, length };
}

/** Rewards of the rewarded leaves below `id` (including itself). */
function leafRewards(f: Plain, id: string): number[] {
  const out: number[] = [];
  const visit = (x: string) => {
    if (f.reward.has(x)) out.push(f.reward.get(x)!);
    for (const c of f.kids.get(x)!) visit(c);
  };
  visit(id);
  return out;
}

/** [root, ..., leaf]. */
function chainTo(f: Plain, leaf: string): string[] {
  const out = [leaf];
  for (let p = f.parentOf.get(leaf)!; p !== null; p = f.parentOf.get(p)!) out.unshift(p);
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function std(xs: number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}
/** GRPO conventions: sample std, one-leaf group → mean 0, std 1. */
function z(x: number, group: number[], eps: number): number {
  if (group.length === 1) return x / (1 + eps);
  return (x - mean(group)) / (std(group) + eps);
}

function rewardedLeaves(nodes: readonly ForestNode[]): ForestNode[] {
  return nodes.filter((n) => n.reward !== undefined);
}

export function oracleGrpo(nodes: readonly ForestNode[]): Map<string, number> {
  const f = plain(nodes);
  return new Map(rewardedLeaves(nodes).map((l) => [l.id, z(l.reward!, leafRewards(f, chainTo(f, l.id)[0]), 1e-6)]));
}

export function oracleTreeGrpo(nodes: readonly ForestNode[]): Map<string, number> {
  const f = plain(nodes);
  return new Map(
    rewardedLeaves(nodes).map((l) => {
      const [root, tree] = chainTo(f, l.id);
      return [l.id, z(l.reward!, leafRewards(f, root), 1e-6) + z(l.reward!, leafRewards(f, tree), 1e-6)];
    }),
  );
}

/**
 * TreePO as its released code computes it: each leaf's id path `root#t1#…#leaf`; for every depth d
 * from 0 to (longest path − 1), the leaves whose paths share the first d + 1 ids form a group (mean 0
 * when alone); the leaf takes (r − group mean) at depth 0 always and at deeper depths when its group
 * holds more than one leaf; raw = the mean of those terms; then token whitening.
 */
export function oracleTreepo(nodes: readonly ForestNode[]): Map<string, number> {
  const f = plain(nodes);
  const leaves = rewardedLeaves(nodes);
  const paths = leaves.map((l) => chainTo(f, l.id));
  const maxDepth = Math.max(0, ...paths.map((p) => p.length - 1));
  const terms: number[][] = leaves.map(() => []);
  for (let d = 0; d < maxDepth; d++) {
    const key = (p: string[]) => p.slice(0, d + 1).join('#');
    const groups = new Map<string, number[]>();
    paths.forEach((p, j) => groups.set(key(p), [...(groups.get(key(p)) ?? []), leaves[j].reward!]));
    paths.forEach((p, j) => {
      const rs = groups.get(key(p))!;
      const m = rs.length === 1 ? 0 : mean(rs);
      if (d === 0 || rs.length > 1) terms[j].push(leaves[j].reward! - m);
    });
  }
  return tokenWhitened(f, leaves, terms.map(mean));
}

/** TreePO with `groups: 'distinct'`: distinct ancestor leaf sets (prompt always; deeper ones with > 1 leaf), mean of (r − mean), then token whitening. */
export function oracleTreepoDistinct(nodes: readonly ForestNode[]): Map<string, number> {
  const f = plain(nodes);
  const leaves = rewardedLeaves(nodes);
  const raw = leaves.map((l) => {
    const chain = chainTo(f, l.id);
    const seen = new Set<string>();
    const diffs: number[] = [];
    chain.slice(0, -1).forEach((a, depth) => {
      const members: string[] = [];
      const visit = (x: string) => {
        if (f.reward.has(x)) members.push(x);
        for (const c of f.kids.get(x)!) visit(c);
      };
      visit(a);
      const key = members.sort().join(',');
      if (seen.has(key)) return;
      seen.add(key);
      const rs = members.map((m) => f.reward.get(m)!);
      if (depth === 0) diffs.push(rs.length === 1 ? l.reward! : l.reward! - mean(rs));
      else if (rs.length > 1) diffs.push(l.reward! - mean(rs));
    });
    return mean(diffs);
  });
  return tokenWhitened(f, leaves, raw);
}

/** Whitening over tokens, literally: one entry per generated token of each leaf. */
function tokenWhitened(f: Plain, leaves: readonly ForestNode[], raw: readonly number[]): Map<string, number> {
  const tokens: number[] = [];
  leaves.forEach((l, j) => {
    for (let t = 0; t < f.length.get(l.id)!; t++) tokens.push(raw[j]);
  });
  const out = new Map<string, number>();
  if (tokens.length < 2) {
    for (const l of leaves) out.set(l.id, 0);
    return out;
  }
  const m = mean(tokens);
  const v = tokens.reduce((a, x) => a + (x - m) ** 2, 0) / (tokens.length - 1);
  leaves.forEach((l, j) => out.set(l.id, (raw[j] - m) / Math.sqrt(v + 1e-8)));
  return out;
}

/**
 * TRACE per-turn values: for each leaf, one value per node of its path (root excluded), written out
 * from the definitions in docs/advantages.md. `term` is the prompt-level term added below a branch
 * point (`none`: trace-local; `tree`, `node`, `ancestors`: the forms of issue 33).
 */
export function oracleTrace(nodes: readonly ForestNode[], term: 'none' | 'tree' | 'node' | 'ancestors' = 'none'): Map<string, number[]> {
  const f = plain(nodes);
  const live = (x: string) => f.kids.get(x)!.filter((c) => leafRewards(f, c).length > 0);
  const isAnchor = (x: string) => f.parentOf.get(x) === null || live(x).length >= 2;
  const V = (x: string) => mean(leafRewards(f, x));
  const out = new Map<string, number[]>();
  for (const l of rewardedLeaves(nodes)) {
    const chain = chainTo(f, l.id);
    const turns: number[] = [];
    for (let k = 1; k < chain.length; k++) {
      // Every anchor strictly above turn k, with the branch taken there towards it.
      const comparisons: number[] = [];
      for (let a = 0; a < k; a++) if (isAnchor(chain[a])) comparisons.push(z(V(chain[a + 1]), leafRewards(f, chain[a]), 1e-6));
      const local = comparisons[comparisons.length - 1];
      const deep = comparisons.length > 1;
      const prompt = leafRewards(f, chain[0]);
      if (term === 'none' || !deep) turns.push(local);
      else if (term === 'tree') turns.push(local + z(V(chain[1]), prompt, 1e-6));
      else if (term === 'node') turns.push(local + z(V(chain[k]), prompt, 1e-6));
      else turns.push(mean(comparisons));
    }
    out.set(l.id, turns);
  }
  return out;
}
