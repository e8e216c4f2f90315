import { forestFromTrees, type AdvantageEstimator, type LeafAdvantage } from '../advantage/index.ts';
import type { RolloutTree, TreeNode } from '../tree/index.ts';
import { modelText, promptSegment, turnSegment, type Segment } from './segments.ts';
import type { ChatTemplate } from '../tokens/chat-template.ts';
import { byteTokenizer, type Tokenizer } from '../tokens/tokenizer.ts';
import { Transcript } from '../tokens/transcript.ts';

/** Version of the exported row layout; bumped when a column changes meaning. */
export const EXPORT_FORMAT_VERSION = 1;

export interface ExportOptions {
  /** Training step the trees belong to (written into every row). */
  step: number;
  /** The advantage estimator whose output the rows carry (`createEstimator(name)`). */
  estimator: AdvantageEstimator;
  /** Tokenizer for text that has no server ids. Default {@link byteTokenizer}. */
  tokenizer?: Tokenizer;
  /** The model's chat template when the rollout used one (prompt and observations framed by it). */
  template?: ChatTemplate;
  /** The prompt text the policy saw (Environment.render). Default: the tree's question. */
  render?: (tree: RolloutTree) => string;
  /** Check that server ids decode to the turn's text with `tokenizer` (default true). */
  checkServerIds?: boolean;
}

/**
 * One rewarded leaf as one training sequence: the prompt, then every turn on the leaf's path (model
 * tokens, then observation tokens). Field names follow verl's agent-loop output where one exists
 * (prompt_ids, response_ids, response_mask, response_logprobs, num_turns); see docs/export.md.
 */
export interface LeafRow {
  step: number;
  prompt_id: string;
  /** `<step>:<prompt id>`: one tree per prompt per step. */
  tree_id: string;
  /** The leaf's node id (unique in the batch): verl's `uid`-like key. */
  leaf_id: string;
  /** Node ids from the first turn down to the leaf. */
  node_path: string[];
  /** Depth of the deepest ancestor with two or more children: the longest prefix shared with another leaf. */
  branch_depth: number;
  /** 'bare' or 'continuation' (restored from a prefix). */
  origin: string;
  num_turns: number;
  prompt_ids: number[];
  response_ids: number[];
  response_mask: number[];
  response_logprobs: number[];
  logprobs_known: boolean;
  /** True when every id is what the server was sent or sampled: each turn's ids came from a token-id prompt (no re-tokenised text). */
  token_exact: boolean;
  /** Per response token: the advantage of the turn the token belongs to on model tokens, 0 on observation tokens. */
  advantages: number[];
  /** The estimator's one scalar for the leaf (LeafAdvantage.advantage). */
  advantage: number;
  /** One advantage per turn on node_path (LeafAdvantage.turns). */
  turn_advantages: number[];
  /** Offset in response_ids where each turn starts. */
  turn_starts: number[];
  reward: number;
  /** Raw continuous score behind the reward (e.g. token F1); null when the environment gave none. */
  score: number | null;
  /** Nodes on the path (prompt included) that were scored by the predictor, and Ṽ(H) there. */
  anchor_ids: string[];
  anchor_predicted: number[];
  prompt_text: string;
  response_text: string;
}

/** A node's segment plus where it sits, for the prefix-trie form. */
export interface NodeTokens extends Segment {
  id: string;
  parent: string | null;
  depth: number;
  predicted?: number;
}

export interface BatchMeta {
  format_version: number;
  step: number;
  estimator: string;
  tokenizer: string;
  /** Leaves without a reward (failed trajectories): not exported, as the estimator gives them no advantage. */
  skipped_leaves: number;
  /** Of the skipped leaves, the trajectories that ended in an error (a server or tool failure after the engine's retries). */
  failed_leaves: number;
  /** complete: no trajectory of the step failed; partial: failed_leaves of them did and are missing from the rows. */
  status: 'complete' | 'partial';
}

export interface ExportBatch {
  meta: BatchMeta;
  rows: LeafRow[];
  /** Every node on an exported path, tokenised once (prompt included). */
  nodes: Map<string, NodeTokens>;
}

/**
 * The line to show when no row carries the rollout's log-probabilities (all `response_logprobs` 0,
 * `logprobs_known` false), which a trainer's importance ratio needs; nothing when some do, or there
 * are no rows. The embedded policy chooses among candidate actions and samples no tokens, so its rows'
 * ids are the tokenizer's encoding of the chosen text: good for testing a pipeline, not for training.
 */
export function logprobWarning(batch: Pick<ExportBatch, 'rows'>): string | undefined {
  if (batch.rows.length === 0 || batch.rows.some((r) => r.logprobs_known)) return undefined;
  return `none of the ${batch.rows.length} rows has rollout log-probabilities matched to its token ids (response_logprobs are 0, logprobs_known false): the embedded policy samples no tokens (its ids are the tokenizer's encoding of the chosen text), and a server must return token ids with its log-probabilities (trace-rl rollout --extras vllm, or --mode tokens); use these rows to test a pipeline, not to train on`;
}

/** Raised when trees and estimator output disagree (a leaf the trees do not hold). */
export class ExportError extends Error {
  override name = 'ExportError';
}

/**
 * Builds one row per rewarded leaf, in the estimator's order (input order of the trees). Advantages
 * are the estimator's own output, spread over tokens: model tokens of turn j get `turns[j]`.
 */
export function buildBatch(trees: readonly RolloutTree[], options: ExportOptions): ExportBatch {
  const transcript = new Transcript(options.tokenizer ?? byteTokenizer, options.template);
  const check = options.checkServerIds ?? true;
  const render = options.render ?? ((t: RolloutTree) => t.prompt);
  const treeOf = new Map<string, RolloutTree>();
  for (const t of trees) for (const id in t.nodes) treeOf.set(id, t);
  const nodes = new Map<string, NodeTokens>();
  const tokensOf = (tree: RolloutTree, n: TreeNode): NodeTokens => {
    let s = nodes.get(n.id);
    if (!s) {
      const seg = n.turn ? turnSegment(n.id, n.turn, transcript, check) : promptSegment(render(tree), transcript);
      s = { ...seg, id: n.id, parent: n.parent, depth: n.depth, ...(n.predicted !== undefined ? { predicted: n.predicted } : {}) };
      nodes.set(n.id, s);
    }
    return s;
  };

  const advantages = options.estimator.estimate(forestFromTrees(trees));
  const rows = advantages.map((adv) => {
    const tree = treeOf.get(adv.id);
    if (!tree) throw new ExportError(`estimator returned leaf "${adv.id}", which is in none of the ${trees.length} trees`);
    return leafRow(options.step, tree, adv, (n) => tokensOf(tree, n));
  });
  let leafCount = 0;
  let failed = 0;
  for (const t of trees) {
    for (const id in t.nodes) {
      const n = t.nodes[id];
      if (n.children.length === 0 && n.parent !== null) leafCount++;
      if (n.end === 'error') failed++;
    }
  }
  const meta: BatchMeta = {
    format_version: EXPORT_FORMAT_VERSION,
    step: options.step,
    estimator: options.estimator.name,
    tokenizer: transcript.name,
    skipped_leaves: leafCount - rows.length,
    failed_leaves: failed,
    status: failed > 0 ? 'partial' : 'complete',
  };
  return { meta, rows, nodes };
}

/**
 * One leaf's row: the path's segments concatenated; model tokens of turn j get the leaf's `turns[j]`.
 * Rows of one tree share the prompt's id array (and the batch's node segments): treat them as read-only.
 */
function leafRow(step: number, tree: RolloutTree, adv: LeafAdvantage, tokensOf: (n: TreeNode) => NodeTokens): LeafRow {
  const rootNode = tree.nodes[tree.promptId];
  const path = adv.path.map((id) => tree.nodes[id]);
  const leaf = path[path.length - 1];
  const prompt = tokensOf(rootNode);
  const segments = path.map(tokensOf);
  let total = 0;
  for (const seg of segments) total += seg.ids.length;
  // Preallocated and filled by index: a step has millions of tokens, and push() in a loop dominated.
  const ids = new Array<number>(total);
  const mask = new Array<number>(total);
  const logprobs = new Array<number>(total);
  const advantages = new Array<number>(total);
  const turnStarts: number[] = [];
  let known = true;
  let exact = true;
  let at = 0;
  segments.forEach((seg, j) => {
    turnStarts.push(at);
    const a = adv.turns[j];
    for (let i = 0; i < seg.ids.length; i++, at++) {
      ids[at] = seg.ids[i];
      mask[at] = seg.mask[i];
      logprobs[at] = seg.logprobs[i];
      advantages[at] = seg.mask[i] === 1 ? a : 0;
    }
    known &&= seg.logprobsKnown;
    exact &&= seg.exact;
  });
  const anchors = [rootNode, ...path].filter((n) => n.predicted !== undefined);
  return {
    step,
    prompt_id: tree.promptId,
    tree_id: `${step}:${tree.promptId}`,
    leaf_id: adv.id,
    node_path: [...adv.path],
    branch_depth: branchDepth([rootNode, ...path]),
    origin: leaf.origin,
    num_turns: path.length,
    prompt_ids: prompt.ids,
    response_ids: ids,
    response_mask: mask,
    response_logprobs: logprobs,
    logprobs_known: known,
    token_exact: exact,
    advantages,
    advantage: adv.advantage,
    turn_advantages: [...adv.turns],
    turn_starts: turnStarts,
    reward: leaf.reward!,
    score: leaf.score ?? null,
    anchor_ids: anchors.map((n) => n.id),
    anchor_predicted: anchors.map((n) => n.predicted!),
    prompt_text: prompt.text,
    response_text: segments.map((seg) => seg.text).join(''),
  };
}

/** Depth of the deepest node on `path` (root first, leaf last, leaf excluded) with two or more children; 0 when none. */
function branchDepth(path: readonly TreeNode[]): number {
  for (let i = path.length - 2; i >= 0; i--) if (path[i].children.length >= 2) return path[i].depth;
  return 0;
}

/**
 * Fills a server tokenizer's cache with every text and id list `buildBatch` will encode or decode
 * (a no-op for local tokenizers); call it before `buildBatch` with the same options.
 */
export async function prepareExport(trees: readonly RolloutTree[], options: Pick<ExportOptions, 'tokenizer' | 'template' | 'render'>): Promise<void> {
  const transcript = new Transcript(options.tokenizer ?? byteTokenizer, options.template);
  if (!transcript.tokenizer.prepare) return;
  const render = options.render ?? ((t: RolloutTree) => t.prompt);
  const prompts: string[] = [];
  const observations: string[] = [];
  const models: string[] = [];
  const idLists: number[][] = [];
  for (const tree of trees) {
    prompts.push(render(tree));
    for (const id in tree.nodes) {
      const turn = tree.nodes[id].turn;
      if (!turn) continue;
      if (turn.observation !== '') observations.push(turn.observation);
      if (turn.tokens) idLists.push(turn.tokens.ids);
      else models.push(modelText(turn));
    }
  }
  await transcript.prepare(prompts, observations, models, idLists);
}
