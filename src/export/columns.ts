import type { ColumnSpec } from './parquet.ts';
import type { LeafRow } from './rows.ts';
import type { TrlRow } from './trl.ts';

/** The verl-shaped columns, in file order; the single source for the Parquet schema and docs/export.md's table. */
export const VERL_COLUMNS: ColumnSpec<LeafRow>[] = [
  { name: 'step', type: 'int32', doc: 'training step of the trees' },
  { name: 'prompt_id', type: 'string', doc: 'prompt (question) id' },
  { name: 'tree_id', type: 'string', doc: '`<step>:<prompt_id>`; rows of one tree form one contrast group' },
  { name: 'leaf_id', type: 'string', doc: 'node id of the leaf, unique in the batch (`q1/0/2`)' },
  { name: 'node_path', type: 'list<string>', doc: 'node ids from the first turn down to the leaf' },
  {
    name: 'branch_depth',
    type: 'int32',
    doc: 'depth of the deepest ancestor with ≥ 2 children (longest prefix shared with another leaf); 0 = only the prompt',
  },
  { name: 'origin', type: 'string', doc: '`bare` (from the prompt) or `continuation` (restored from a prefix)' },
  { name: 'num_turns', type: 'int32', doc: 'model turns in the sequence (each followed by its observation)' },
  { name: 'prompt_ids', type: 'list<int32>', dictionary: false, doc: 'token ids of the rendered prompt' },
  { name: 'response_ids', type: 'list<int32>', dictionary: false, doc: 'token ids of every turn: model tokens, then observation tokens' },
  { name: 'response_mask', type: 'list<int32>', doc: '1 on model tokens, 0 on observation / tool tokens' },
  {
    name: 'response_logprobs',
    type: 'list<double>',
    dictionary: false,
    doc: 'rollout log-probability per response token (0 on observation tokens, and where unknown)',
  },
  { name: 'logprobs_known', type: 'bool', doc: 'true when every model token has its rollout log-probability' },
  {
    name: 'token_exact',
    type: 'bool',
    doc: 'true when every id is one the server was sent or sampled (token-id prompts, nothing re-tokenised); false rows came from text prompts',
  },
  { name: 'advantages', type: 'list<double>', doc: 'per response token: the turn’s advantage on model tokens, 0 on observation tokens' },
  { name: 'advantage', type: 'double', doc: 'the estimator’s scalar for the leaf' },
  { name: 'turn_advantages', type: 'list<double>', doc: 'one advantage per turn of node_path' },
  { name: 'turn_starts', type: 'list<int32>', doc: 'offset in response_ids where each turn starts' },
  { name: 'reward', type: 'double', doc: 'terminal reward in {0, 1} (verl’s reward_score)' },
  { name: 'score', type: 'double', nullable: true, doc: 'raw score behind the reward (token F1), null when none' },
  { name: 'anchor_ids', type: 'list<string>', doc: 'nodes on the path (prompt included) the predictor scored' },
  { name: 'anchor_predicted', type: 'list<double>', doc: 'predicted success Ṽ(H) at each anchor' },
  { name: 'prompt_text', type: 'string', doc: 'text prompt_ids decode to' },
  { name: 'response_text', type: 'string', doc: 'text response_ids decode to' },
];

export const TRL_COLUMNS: ColumnSpec<TrlRow>[] = [
  { name: 'step', type: 'int32', doc: 'training step' },
  { name: 'prompt_id', type: 'string', doc: 'prompt id' },
  { name: 'tree_id', type: 'string', doc: '`<step>:<prompt_id>`' },
  { name: 'leaf_id', type: 'string', doc: 'leaf node id' },
  { name: 'prompt', type: 'string', doc: 'rendered prompt text' },
  { name: 'completion', type: 'string', doc: 'all turns’ text (model text and observations)' },
  { name: 'prompt_ids', type: 'list<int32>', dictionary: false, doc: 'prompt token ids' },
  { name: 'completion_ids', type: 'list<int32>', dictionary: false, doc: 'completion token ids (model and observation tokens)' },
  { name: 'completion_mask', type: 'list<int32>', doc: 'all 1 (real tokens; TRL pads with 0 when batching)' },
  { name: 'tool_mask', type: 'list<int32>', doc: '1 on model tokens, 0 on tool / observation tokens: multiply into the loss mask' },
  { name: 'old_per_token_logps', type: 'list<double>', dictionary: false, doc: 'rollout log-probability per completion token (0 where unknown)' },
  { name: 'logprobs_known', type: 'bool', doc: 'true when old_per_token_logps are real on every model token' },
  { name: 'token_exact', type: 'bool', doc: 'true when the ids are the ones the server was sent or sampled (nothing re-tokenised)' },
  { name: 'advantages', type: 'double', doc: 'one scalar per sequence (stock GRPO shape)' },
  { name: 'per_token_advantages', type: 'list<double>', doc: 'turn advantage per completion token (0 on tool tokens)' },
  { name: 'reward', type: 'double', doc: 'terminal reward' },
  { name: 'num_turns', type: 'int32', doc: 'model turns' },
];

const PARQUET_TYPE: Record<string, string> = {
  string: 'string (UTF8)',
  int32: 'int32',
  double: 'double',
  bool: 'boolean',
  'list<int32>': 'list<int32>',
  'list<double>': 'list<double>',
  'list<string>': 'list<string>',
};

/** The markdown table docs/export.md shows for a row form (a test keeps the page equal to it). */
export function columnTable<R>(columns: readonly ColumnSpec<R>[]): string {
  const lines = ['| column | Parquet type | meaning |', '|---|---|---|'];
  for (const c of columns) lines.push(`| \`${c.name}\` | ${PARQUET_TYPE[c.type]}${c.nullable ? ', nullable' : ''} | ${c.doc} |`);
  return lines.join('\n');
}
