import type { BatchMeta, ExportBatch } from './rows.ts';

/**
 * The de-duplicated form: every node on an exported path once (its own tokens only), and leaves that
 * reference their path. A leaf's full sequence is the concatenation of its path's node tokens, root
 * (the prompt) first — identical to the verl row's prompt_ids + response_ids.
 */
export type TrieRecord =
  | ({ kind: 'meta'; form: 'trace-rl-prefix-trie' } & BatchMeta)
  | {
      kind: 'node';
      id: string;
      parent: string | null;
      depth: number;
      ids: number[];
      mask: number[];
      logprobs: number[];
      logprobs_known: boolean;
      predicted: number | null;
      text: string;
    }
  | {
      kind: 'leaf';
      id: string;
      tree_id: string;
      prompt_id: string;
      path: string[];
      turn_advantages: number[];
      advantage: number;
      reward: number;
      score: number | null;
    };

/** Meta first, then nodes parents-before-children (insertion order of a depth-first walk), then leaves. */
export function trieRecords(batch: ExportBatch): TrieRecord[] {
  const out: TrieRecord[] = [{ kind: 'meta', form: 'trace-rl-prefix-trie', ...batch.meta }];
  const emitted = new Set<string>();
  for (const row of batch.rows) {
    for (const id of [row.prompt_id, ...row.node_path]) {
      if (emitted.has(id)) continue;
      emitted.add(id);
      const n = batch.nodes.get(id)!;
      out.push({
        kind: 'node',
        id,
        parent: n.parent,
        depth: n.depth,
        ids: n.ids,
        mask: n.mask,
        logprobs: n.logprobs,
        logprobs_known: n.logprobsKnown,
        predicted: n.predicted ?? null,
        text: n.text,
      });
    }
  }
  for (const row of batch.rows) {
    out.push({
      kind: 'leaf',
      id: row.leaf_id,
      tree_id: row.tree_id,
      prompt_id: row.prompt_id,
      path: [row.prompt_id, ...row.node_path],
      turn_advantages: row.turn_advantages,
      advantage: row.advantage,
      reward: row.reward,
      score: row.score,
    });
  }
  return out;
}
