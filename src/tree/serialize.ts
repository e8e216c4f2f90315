import { z } from 'zod';
import type { RolloutTree } from './types.ts';

/** What an environment served over the wire keeps on a recorded turn (Turn.env): its raw reward and the candidates it listed. */
export const turnEnvSchema = z.object({
  reward: z.number().optional(),
  candidates: z
    .object({ search: z.array(z.string()), answer: z.array(z.string()), tool: z.array(z.object({ type: z.string(), input: z.string() })).optional() })
    .optional(),
});

const turnSchema = z.object({
  thought: z.string(),
  action: z.object({ type: z.string(), input: z.string() }),
  observation: z.string(),
  text: z.string().optional(),
  tokens: z
    .object({
      ids: z.array(z.number().int()),
      logprobs: z.array(z.number()),
      mask: z.array(z.number().int().min(0).max(1)),
      prompt: z.enum(['ids', 'text']).optional(),
      sequenceId: z.string().max(256).optional(),
    })
    .refine((t) => t.ids.length === t.logprobs.length && t.ids.length === t.mask.length, {
      message: 'tokens.ids, tokens.logprobs and tokens.mask must have the same length',
    })
    .optional(),
  generatedTokens: z.number().int().nonnegative().optional(),
  entropy: z.number().optional(),
  logprob: z.number().optional(),
  error: z
    .object({ code: z.enum(['timeout', 'server_error', 'parse_error', 'context_overflow', 'tool_error', 'budget', 'cancelled']), message: z.string() })
    .optional(),
  env: turnEnvSchema.optional(),
});

const nodeSchema = z.object({
  id: z.string(),
  parent: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  turn: turnSchema.optional(),
  children: z.array(z.string()),
  origin: z.enum(['root', 'bare', 'continuation']),
  end: z.enum(['answer', 'turn_limit', 'context', 'error', 'cancelled']).optional(),
  reward: z.union([z.literal(0), z.literal(1)]).optional(),
  score: z.number().optional(),
  predicted: z.number().optional(),
  expanded: z.number().int().nonnegative().optional(),
  weight: z.number().positive().finite().optional(),
});

export const treeSchema = z.object({ promptId: z.string(), prompt: z.string(), nodes: z.record(z.string(), nodeSchema) }).superRefine((t, ctx) => {
  const rootNode = t.nodes[t.promptId];
  if (!rootNode || rootNode.parent !== null) {
    ctx.addIssue({ code: 'custom', path: ['nodes', t.promptId], message: 'the root node (id = promptId, parent null) is missing' });
    return;
  }
  for (const [key, n] of Object.entries(t.nodes)) {
    if (key !== n.id) ctx.addIssue({ code: 'custom', path: ['nodes', key, 'id'], message: `id "${n.id}" differs from its key` });
    for (const c of n.children) {
      if (t.nodes[c]?.parent !== n.id)
        ctx.addIssue({ code: 'custom', path: ['nodes', key, 'children'], message: `child "${c}" does not point back to "${n.id}"` });
    }
    if (n.parent !== null && !t.nodes[n.parent]?.children.includes(n.id)) {
      ctx.addIssue({ code: 'custom', path: ['nodes', key, 'parent'], message: `parent "${n.parent}" does not list "${n.id}" as a child` });
    }
  }
});

export function treeToJSON(tree: RolloutTree): string {
  return JSON.stringify(tree);
}

/** Parses and validates a stored tree; throws a ZodError naming the field on bad input. */
export function treeFromJSON(text: string): RolloutTree {
  return treeSchema.parse(JSON.parse(text)) as RolloutTree;
}
