/**
 * The settings of the two server-environment kinds, `env.kind: openenv` and `env.kind: agentgym`: what
 * a configuration holds, apart from the code that builds them (setup.ts), so that parsing a
 * configuration loads no session, fleet or protocol code.
 */
import { z } from 'zod';
import { kindObject } from '../kind.ts';
import { tasksSchema } from './tasks.ts';

const address = z.string().regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, 'an http(s):// address, e.g. http://127.0.0.1:8000');
const url = z
  .union([address, z.array(address).min(1).max(64)])
  .transform((u) => (typeof u === 'string' ? [u] : u))
  .refine((u) => new Set(u).size === u.length, 'each server once')
  .describe(
    'openenv, agentgym: the server’s base address, e.g. http://127.0.0.1:8000 (OpenEnv sessions open at its /ws); or a list of servers of the same environment (a fleet: each session goes to the least-loaded one, env.sessions per server; a server that stops answering is failed over by a checked replay).',
  );

const shared = {
  url,
  tasks: tasksSchema,
  testTasks: tasksSchema
    .optional()
    .describe('openenv, agentgym: held-out tasks (same forms as tasks) for test_accuracy and trace-rl eval; none: no held-out evaluation.'),
  action: z
    .strictObject({
      text: z
        .enum(['turn', 'action', 'input'])
        .default('turn')
        .describe(
          'openenv, agentgym: what of a model turn the server receives: turn = the whole text (the server parses it); action = the Search-R1 action as one tag, <search>q</search> / <answer>a</answer>; input = the action’s text only (<answer>click[Buy]</answer> sends click[Buy]).',
        ),
      field: z
        .string()
        .min(1)
        .optional()
        .describe('openenv: the action object’s string field the text goes into (default: the only string field of GET /schema’s action).'),
    })
    .default({ text: 'turn' }),
  questionAfter: z
    .string()
    .min(1)
    .optional()
    .describe(
      'openenv, agentgym: the prompt’s question (what the predictor reads and the tree keeps) is the first observation after the last occurrence of this marker, e.g. "Question: "; default the whole first observation.',
    ),
  successThreshold: z.number().default(1).describe('openenv, agentgym: success = the final reward ≥ this.'),
  branching: z
    .enum(['replay', 'roots-only'])
    .default('replay')
    .describe(
      'openenv, agentgym: replay = continuations restore a prefix by a new session, a reset and a replay of its actions, checked turn by turn; roots-only = no prefix is branched (for a server that is not replay-deterministic): continuation budget becomes extra bare rollouts.',
    ),
  fork: z
    .enum(['auto', 'off'])
    .default('auto')
    .describe(
      'openenv, agentgym: auto = where the server offers trace-rl’s fork extension (GET /fork), steps that may be branched ask it to keep their state and a continuation opens a session from it (no step replayed; checked against the record; replay when refused); off = always replay.',
    ),
  sessions: z
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(4)
    .describe('openenv, agentgym: most sessions open at once on each server (an OpenEnv server refuses more than its max_concurrent_envs).'),
  timeoutMs: z.number().int().min(100).max(600_000).default(30_000).describe('openenv, agentgym: longest wait for one answer of the server, ms.'),
  maxReplyBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(4 * 1024 * 1024)
    .describe('openenv, agentgym: largest answer accepted from the server, bytes.'),
  tokenFile: z
    .string()
    .min(1)
    .optional()
    .describe('openenv, agentgym: a file whose first line is the server’s token, sent as Authorization: Bearer (trace-rl env serve --token-file).'),
  taskField: z
    .string()
    .regex(/^[A-Za-z_][\w-]{0,63}$/, 'a field name')
    .optional()
    .describe(
      'openenv, agentgym: the reset field a numbered task goes into (default seed for openenv, data_idx for agentgym; AgentGym’s SQLGym reads item_id, WebShop session_id, the tool environments id).',
    ),
};

export const openEnvSettings = kindObject('openenv', {
  ...shared,
  observationField: z.string().min(1).optional().describe('openenv: the observation’s string field the agent reads (default: its only string field).'),
  candidatesField: z
    .string()
    .min(1)
    .optional()
    .describe('openenv: an observation field listing the candidate actions (texts or numbers), e.g. legal_actions; default: the metadata’s candidates only.'),
});
export const agentGymSettings = kindObject('agentgym', {
  ...shared,
  sessionKey: z
    .enum(['id', 'env_idx'])
    .default('id')
    .describe(
      'agentgym: the session key in every body and query: id (TextCraft, BabyAI, SciWorld, ALFWorld) or env_idx (WebShop, SQLGym, SearchQA, the tool environments, WebArena).',
    ),
  pathPrefix: z
    .string()
    .regex(/^(\/[\w.-]+)*$/, 'empty, or /name segments')
    .default('')
    .describe('agentgym: a path every route sits under, e.g. /webshop for a server that mounts /webshop/create …; default none.'),
  candidatesRoute: z
    .string()
    .regex(/^\/[\w./-]*$/, 'a path')
    .optional()
    .describe(
      'agentgym: a GET route listing the candidate actions after each reset and step, asked with the session key, e.g. /available_actions (WebShop: its clickables become click[…]); default none.',
    ),
});

export type OpenEnvSettings = z.output<typeof openEnvSettings>;
export type AgentGymSettings = z.output<typeof agentGymSettings>;
/** What both kinds take. */
export type SharedSettings = Omit<AgentGymSettings, 'kind' | 'sessionKey' | 'pathPrefix' | 'candidatesRoute'>;

/**
 * Rollout workers each hold their own sessions: they share env.sessions per server (⌊sessions / workers⌋
 * each), so the servers are never sent more than env.sessions at once; a worker needs at least one.
 */
export function sessionsPerWorker<S extends SharedSettings>(s: S, workers: number): S | string {
  if (s.sessions < workers)
    return `env.sessions ${s.sessions} is below engine.workers ${workers}: each worker opens its own sessions to every server, at least one, and together they may hold only env.sessions; set env.sessions to ${workers} or more, or engine.workers to ${s.sessions} or less`;
  return { ...s, sessions: Math.floor(s.sessions / workers) };
}
