import { z } from 'zod';
import { trainConfigSchema } from './config.ts';

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  /** Set by mergeVariants on the fields of a union's variants. */
  ofVariant?: boolean;
}

/** One leaf setting of the configuration, as the schema describes it. */
export interface SettingDoc {
  /** Dotted path, e.g. `strategy.budget`. */
  path: string;
  /** Human-readable type, e.g. `integer [1, ∞]` or `` `mlp` \| `beta` ``. */
  type: string;
  /** Allowed values of an enum setting (from the schema, hence from the registries). */
  values?: readonly string[];
  /** True for number and integer settings (the CLI converts flag text to a number). */
  numeric: boolean;
  default: unknown;
  description: string;
}

/** Every leaf setting with its type, default and description, read from the schema (the single source). */
export function configSettings(): SettingDoc[] {
  const schema = z.toJSONSchema(trainConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const defaults = trainConfigSchema.parse({}) as Record<string, unknown>;
  const out: SettingDoc[] = [];
  const visit = (s: JsonSchema, path: string[], parentDescription?: string) => {
    const variants = s.oneOf ?? s.anyOf;
    const key = variants && (['name', 'kind'] as const).find((k) => variants.every((v) => v.properties?.[k]?.const !== undefined));
    if (key) {
      for (const [k, child] of Object.entries(mergeVariants(variants!, key, key === 'kind' ? s.description : undefined))) visit(child, [...path, k]);
      return;
    }
    const props = collectProperties(s);
    if (props && Object.keys(props).length > 0) {
      for (const [k, child] of Object.entries(props)) visit(child, [...path, k]);
      return;
    }
    const types = Array.isArray(s.type) ? s.type : [s.type];
    out.push({
      path: path.join('.'),
      type: typeOf(s),
      ...(s.enum ? { values: s.enum.map(String) } : {}),
      numeric: types.includes('number') || types.includes('integer'),
      // A field of one variant (kind, name) has that variant's default, not the default variant's.
      default:
        s.ofVariant && s.default !== undefined
          ? s.default
          : (path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], defaults) ?? s.default),
      description: s.description ?? parentDescription ?? '',
    });
  };
  visit(schema, []);
  return out;
}

/**
 * The configuration reference as a Markdown table, generated from the schema's own descriptions (the
 * single source): docs/configuration.md is this text, and a test keeps the two equal.
 */
export function configReference(): string {
  const rows = configSettings().map(
    (s) => `| \`${s.path}\` | ${s.type} | ${s.default === undefined ? '—' : `\`${JSON.stringify(s.default)}\``} | ${s.description.replace(/\|/g, '\\|')} |`,
  );
  return [
    '# Configuration reference',
    '',
    'Generated from the schema in `src/train/config.ts` (`npx trace-rl config --docs`); each description is',
    'the only place a setting is documented. A config file (YAML or JSON) sets any of these by its dotted',
    'path; flags of `trace-rl train` and `--set path=value` override it. `npx trace-rl config` prints the',
    'resolved configuration.',
    '',
    '| setting | type | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    ...NAME_MAP,
    '',
  ].join('\n');
}

/**
 * The settings under the names researchers know from TRL's GRPOConfig and verl's PPO/GRPO YAML. Only
 * names are mapped here (each meaning stays in the schema's description above); "—" where the other
 * trainer has no such setting. A TRACE step does not give every prompt the same number of
 * trajectories, so `num_generations` / `rollout.n` match only grpo's uniform allocation.
 */
const NAME_MAP = [
  '## The same settings in TRL and verl',
  '',
  'A starting point for moving a GRPO setup over (TRL `GRPOConfig`, verl `ppo_trainer.yaml` with',
  '`algorithm.adv_estimator: grpo`). `examples/config/trace.yaml` is a commented configuration that',
  '`trace-rl train --config` runs.',
  '',
  '| trace-rl | TRL GRPOConfig | verl | note |',
  '|---|---|---|---|',
  '| `strategy.groupSize` (grpo) | `num_generations` | `actor_rollout_ref.rollout.n` | grpo’s group size G; without it G = ⌊`strategy.budget` / `pool`⌋. TRACE strategies give each prompt its own m_i instead |',
  '| `pool` | `generation_batch_size` / `num_generations` | `data.train_batch_size` | prompts per step (for TRACE: the candidates the root allocation chooses from) |',
  '| `strategy.budget` (unit trajectories) | `generation_batch_size` | `data.train_batch_size` × `rollout.n` | trajectories per step, B |',
  '| `engine.maxTurns` | — (multi-turn rollouts are the user’s `rollout_func`) | `actor_rollout_ref.rollout.multi_turn.max_assistant_turns` | turn limit T |',
  '| `engine.maxTokensPerTurn` | `max_completion_length` (per completion, not per turn) | `actor_rollout_ref.rollout.response_length` (whole response) | tokens per policy call |',
  '| `policy.temperature` | `temperature` | `actor_rollout_ref.rollout.temperature` | sampling temperature τ |',
  '| `policy.clip` | `epsilon` | `actor_rollout_ref.actor.clip_ratio` | PPO clip ε |',
  '| `policy.learningRate` | `learning_rate` | `actor_rollout_ref.actor.optim.lr` | policy step size |',
  '| `policy.epochs` | `num_iterations` | `actor_rollout_ref.actor.ppo_epochs` | passes over a step’s samples |',
  '| `advantageScale` | `scale_rewards` (`group` ↔ `std`, `none` ↔ `none`) | `algorithm.norm_adv_by_std_in_grpo` (true ↔ `std`) | divide group deviations by their std or not (Dr. GRPO) |',
  '| `estimator` | — (GRPO only) | `algorithm.adv_estimator` | grpo, tree-grpo, treepo, trace, trace-local |',
  '| `steps` | `max_steps` | `trainer.total_training_steps` | training steps |',
  '| `seed` | `seed` | `data.seed` | one seed for the run |',
  '| `policy.baseUrls` (openai) | `vllm_server_base_url` (`vllm_mode: server`) | — (verl starts its own servers) | inference servers |',
  '| `eval.every` | `eval_steps` | `trainer.test_freq` | held-out evaluation every k steps |',
];

function collectProperties(s: JsonSchema): Record<string, JsonSchema> | undefined {
  if (s.properties) return s.properties;
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => collectProperties(x) ?? {}));
  // A union of objects (e.g. options per strategy name): every variant's fields, the first one's
  // description of a shared field kept.
  const variants = s.anyOf ?? s.oneOf;
  if (variants?.some((x) => collectProperties(x))) return Object.assign({}, ...variants.map((x) => collectProperties(x) ?? {}).reverse());
  return undefined;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((e) => `\`${String(e)}\``).join(' \\| ');
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  const lo = s.minimum ?? s.exclusiveMinimum;
  const hi = s.maximum !== undefined && s.maximum < 1e15 ? s.maximum : s.exclusiveMaximum;
  const range =
    lo !== undefined || hi !== undefined
      ? ` ${s.exclusiveMinimum !== undefined ? '(' : '['}${lo ?? '−∞'}, ${hi ?? '∞'}${s.exclusiveMaximum !== undefined ? ')' : ']'}`
      : '';
  if (t === 'array' && s.items) return `list of ${typeOf(s.items)}`;
  return t + range;
}

/**
 * A union discriminated by `key` (`name`: the strategy options; `kind`: env and policy) as one list
 * of fields: `key` lists every value, and each field says which variants take it (a field described
 * differently, or with another default, by some gets one row per description). A nested object that
 * several variants take (env.math) is merged field by field the same way.
 */
function mergeVariants(variants: JsonSchema[], key: 'name' | 'kind', description?: string): Record<string, JsonSchema> {
  const values = variants.map((v) => String(v.properties![key].const));
  const head: JsonSchema = {
    type: 'string',
    enum: values,
    description: description ?? 'which one; each takes the fields below marked with its name (any other field is an error)',
  };
  return {
    [key]: head,
    ...mergeFields(
      variants.map((v, i) => ({ name: values[i]!, properties: v.properties! })),
      key,
    ),
  };
}

function mergeFields(variants: Array<{ name: string; properties: Record<string, JsonSchema> }>, skip?: string): Record<string, JsonSchema> {
  const rows = new Map<string, { key: string; schemas: JsonSchema[]; names: string[] }>();
  for (const v of variants) {
    for (const [k, child] of Object.entries(v.properties)) {
      if (k === skip) continue;
      const id = `${k}\u0000${child.description ?? ''}\u0000${collectProperties(child) ? '' : JSON.stringify(child.default)}`;
      const row = rows.get(id) ?? { key: k, schemas: [], names: [] };
      row.schemas.push(child);
      row.names.push(v.name);
      rows.set(id, row);
    }
  }
  const counts = new Map<string, number>();
  for (const r of rows.values()) counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
  const out: Record<string, JsonSchema> = {};
  for (const r of rows.values()) {
    const key = counts.get(r.key)! > 1 ? `${r.key} (${r.names.join(', ')})` : r.key;
    const nested = r.schemas.map((c) => collectProperties(c));
    out[key] = nested.every((p) => p && Object.keys(p).length > 0)
      ? { properties: mergeFields(nested.map((p, i) => ({ name: r.names[i]!, properties: p! }))) }
      : { ...r.schemas[0]!, description: `${r.schemas[0]!.description ?? ''} [${r.names.join(', ')}]`, ofVariant: true };
  }
  return out;
}
