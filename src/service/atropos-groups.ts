import type { LeafRow } from '../export/index.ts';

/**
 * One group as the Atropos trajectory API takes it (`ScoredData`, docs/atropos.md): parallel lists,
 * one entry per sequence. `tokens` is the whole sequence (prompt included); `masks` holds the token id
 * where the sequence is trained and -100 everywhere else; `advantages` and `inference_logprobs` are
 * aligned with `tokens` (0 and 1.0 at untrained positions, as Atropos's own environments write them).
 */
export interface ScoredGroup {
  tokens: number[][];
  masks: number[][];
  scores: number[];
  advantages: number[][];
  inference_logprobs?: number[][];
  group_overrides: Record<string, unknown>;
  env_id?: number;
}

/**
 * How a step's rows become groups.
 * - `turns`: every model turn of every exported leaf is a group of one sequence: the leaf's ids up to
 *   the end of that turn's model tokens, trained on those tokens only, scored with the turn's advantage.
 *   A group of one passes its score through the group normalisation that trainers reading this API apply
 *   (verl-recipe's atropos trainer runs verl's GRPO over each group's scores; Atropos's example trainer
 *   normalises scores within a group of two or more), so the trainer's advantage on every trained
 *   token is TRACE's, and observation tokens are never inside a trained span.
 * - `trees`: one group per tree, one sequence per leaf (the whole row), observation tokens masked,
 *   per-token `advantages` the rows' own and `scores` the rewards: for a trainer that reads `advantages`.
 *   A tree is sent as groups of power-of-two sizes (its binary decomposition) because the API serves a
 *   group only as part of a pack of equal-size groups summing to the largest queued size.
 */
export const ATROPOS_LAYOUTS = ['turns', 'trees'] as const;
export type AtroposLayout = (typeof ATROPOS_LAYOUTS)[number];

export function isAtroposLayout(s: string): s is AtroposLayout {
  return (ATROPOS_LAYOUTS as readonly string[]).includes(s);
}

/** The masked-position value of `masks` (PyTorch's ignore index). */
export const IGNORED = -100;
/** The masked-position value of `inference_logprobs`: not a probability, so a reader cannot take it for one. */
export const MASKED_LOGPROB = 1.0;

/** A step's exported rows as Atropos groups, in row order (trees in stored order, leaves depth-first). */
export function atroposGroups(rows: readonly LeafRow[], layout: AtroposLayout): ScoredGroup[] {
  if (layout === 'turns') return rows.flatMap(turnGroups);
  const byTree = new Map<string, LeafRow[]>();
  for (const r of rows) {
    const list = byTree.get(r.tree_id);
    if (list) list.push(r);
    else byTree.set(r.tree_id, [r]);
  }
  return [...byTree.values()].flatMap(treeGroups);
}

/** Sizes of the power-of-two groups a tree of `n` leaves is sent as, largest first (6 → 4, 2). */
export function powerOfTwoParts(n: number): number[] {
  const parts: number[] = [];
  for (let bit = 1 << 30; bit >= 1; bit >>= 1) if (n & bit) parts.push(bit);
  return parts;
}

function turnGroups(r: LeafRow): ScoredGroup[] {
  const full = [...r.prompt_ids, ...r.response_ids];
  const p = r.prompt_ids.length;
  const groups: ScoredGroup[] = [];
  for (let j = 0; j < r.turn_starts.length; j++) {
    const start = r.turn_starts[j]!;
    const end = r.turn_starts[j + 1] ?? r.response_ids.length;
    let last = -1;
    for (let k = start; k < end; k++) if (r.response_mask[k] === 1) last = k;
    // A turn with no sampled token (an empty completion) has nothing to train.
    if (last < 0) continue;
    const length = p + last + 1;
    const masks = new Array<number>(length).fill(IGNORED);
    const advantages = new Array<number>(length).fill(0);
    const logprobs = new Array<number>(length).fill(MASKED_LOGPROB);
    for (let k = start; k <= last; k++) {
      if (r.response_mask[k] !== 1) continue;
      masks[p + k] = full[p + k]!;
      advantages[p + k] = r.advantages[k]!;
      logprobs[p + k] = r.response_logprobs[k]!;
    }
    groups.push({
      tokens: [full.slice(0, length)],
      masks: [masks],
      scores: [r.turn_advantages[j]!],
      advantages: [advantages],
      ...(r.logprobs_known ? { inference_logprobs: [logprobs] } : {}),
      group_overrides: { trace_rl: { step: r.step, tree_id: r.tree_id, leaf_id: r.leaf_id, turn: j, reward: r.reward, token_exact: r.token_exact } },
    });
  }
  return groups;
}

function treeGroups(rows: readonly LeafRow[]): ScoredGroup[] {
  const groups: ScoredGroup[] = [];
  let at = 0;
  for (const size of powerOfTwoParts(rows.length)) {
    const part = rows.slice(at, at + size);
    at += size;
    const known = part.every((r) => r.logprobs_known);
    groups.push({
      tokens: part.map((r) => [...r.prompt_ids, ...r.response_ids]),
      masks: part.map((r) => [...r.prompt_ids.map(() => IGNORED), ...r.response_ids.map((id, k) => (r.response_mask[k] === 1 ? id : IGNORED))]),
      scores: part.map((r) => r.reward),
      advantages: part.map((r) => [...r.prompt_ids.map(() => 0), ...r.response_ids.map((_, k) => (r.response_mask[k] === 1 ? r.advantages[k]! : 0))]),
      ...(known
        ? {
            inference_logprobs: part.map((r) => [
              ...r.prompt_ids.map(() => MASKED_LOGPROB),
              ...r.response_ids.map((_, k) => (r.response_mask[k] === 1 ? r.response_logprobs[k]! : MASKED_LOGPROB)),
            ]),
          }
        : {}),
      group_overrides: {
        trace_rl: {
          step: part[0]!.step,
          tree_id: part[0]!.tree_id,
          leaves: rows.length,
          leaf_ids: part.map((r) => r.leaf_id),
          token_exact: part.every((r) => r.token_exact),
        },
      },
    });
  }
  return groups;
}

/** Sequences in a list of groups. */
export function sequencesIn(groups: readonly ScoredGroup[]): number {
  return groups.reduce((n, g) => n + g.tokens.length, 0);
}
