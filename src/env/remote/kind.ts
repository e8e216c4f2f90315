/**
 * The two server-environment kinds, `env.kind: openenv` and `env.kind: agentgym` (docs/environments.md
 * "Your environment as a server"). Building one reads the tasks, checks the server (OpenEnv: GET
 * /schema for the action's text field) and fetches every task's first observation once (its prompt),
 * `env.sessions` at a time.
 */
import { z } from 'zod';
import type { CandidateSource, Environment } from '../types.ts';
import { envKind, kindObject, type EnvBuildContext, type EnvironmentSetup } from '../kind.ts';
import { AgentGymServer } from './agentgym-session.ts';
import { actionFieldFromSchema } from './openenv-protocol.ts';
import { OpenEnvServer } from './openenv-session.ts';
import { firstObservations, refusedTasksLine } from './first-observations.ts';
import { RemoteServerError } from './reply.ts';
import { RemoteEnv } from './remote-env.ts';
import type { RemoteLimits, RemoteServer } from './session.ts';
import { resolveTasks, taskOf, taskPrompt, tasksSchema, type NumberParam } from './tasks.ts';
import { escapeControl } from '../../util/escape-control.ts';
import { controlToken } from '../../http/control.ts';
import type { Prompt } from '../../tree/types.ts';

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

const openenv = kindObject('openenv', {
  ...shared,
  observationField: z.string().min(1).optional().describe('openenv: the observation’s string field the agent reads (default: its only string field).'),
  candidatesField: z
    .string()
    .min(1)
    .optional()
    .describe('openenv: an observation field listing the candidate actions (texts or numbers), e.g. legal_actions; default: the metadata’s candidates only.'),
});
const agentgym = kindObject('agentgym', {
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

type SharedSettings = Omit<z.output<typeof agentgym>, 'kind' | 'sessionKey' | 'pathPrefix' | 'candidatesRoute'>;

export const openEnvKind = envKind('openenv', openenv, {
  forWorkers: sessionsPerWorker,
  async build(s, { maxTurns, prompts }) {
    const limits = limitsOf(s);
    // The servers of a fleet serve one environment: the first one's schema stands for all.
    const probe = new OpenEnvServer({ ...limits, url: s.url[0]!, actionField: s.action.field ?? '' });
    let schema: unknown;
    try {
      schema = await probe.get('/schema');
    } catch (e) {
      if (s.action.field === undefined)
        throw new RemoteServerError(`openenv server ${probe.url}: GET /schema failed (${(e as Error).message}); give env.action.field to go without it`);
    }
    const actionField = schema === undefined ? s.action.field! : actionFieldFromSchema(schema, `openenv server ${probe.url}`, s.action.field);
    const servers = s.url.map(
      (url) =>
        new OpenEnvServer({
          ...limits,
          url,
          actionField,
          ...(s.observationField ? { observationField: s.observationField } : {}),
          ...(s.candidatesField ? { candidatesField: s.candidatesField } : {}),
        }),
    );
    return setupOver(servers, s, { maxTurns, ...(prompts ? { prompts } : {}) }, s.taskField ?? 'seed', 'openenv');
  },
});

export const agentGymKind = envKind('agentgym', agentgym, {
  forWorkers: sessionsPerWorker,
  async build(s, { maxTurns, prompts }) {
    const servers = s.url.map(
      (url) =>
        new AgentGymServer({
          ...limitsOf(s),
          url,
          dialect: { key: s.sessionKey, prefix: s.pathPrefix },
          ...(s.candidatesRoute ? { candidatesRoute: s.candidatesRoute } : {}),
        }),
    );
    return setupOver(servers, s, { maxTurns, ...(prompts ? { prompts } : {}) }, s.taskField ?? 'data_idx', 'agentgym');
  },
});

/**
 * Rollout workers each hold their own sessions: they share env.sessions per server (⌊sessions / workers⌋
 * each), so the servers are never sent more than env.sessions at once; a worker needs at least one.
 */
function sessionsPerWorker<S extends SharedSettings>(s: S, workers: number): S | string {
  if (s.sessions < workers)
    return `env.sessions ${s.sessions} is below engine.workers ${workers}: each worker opens its own sessions to every server, at least one, and together they may hold only env.sessions; set env.sessions to ${workers} or more, or engine.workers to ${s.sessions} or less`;
  return { ...s, sessions: Math.floor(s.sessions / workers) };
}

function limitsOf(s: SharedSettings): RemoteLimits {
  return { timeoutMs: s.timeoutMs, maxReplyBytes: s.maxReplyBytes, ...(s.tokenFile ? { token: controlToken(s.tokenFile).token } : {}) };
}

async function setupOver(
  servers: readonly RemoteServer[],
  s: SharedSettings,
  context: EnvBuildContext,
  numberParam: NumberParam,
  dataset: string,
): Promise<EnvironmentSetup> {
  const { train, test, skipped } = context.prompts
    ? { train: [...context.prompts.train], test: [...context.prompts.test], skipped: undefined }
    : await firstPrompts(servers, s, numberParam, dataset);
  const fork = s.fork === 'auto' && s.branching === 'replay' ? await Promise.all(servers.map((server) => server.forkOffer())) : undefined;
  const env = new RemoteEnv({
    server: servers,
    maxTurns: context.maxTurns,
    action: s.action.text,
    successThreshold: s.successThreshold,
    sessions: s.sessions,
    branching: s.branching,
    timeoutMs: s.timeoutMs,
    ...(fork ? { fork } : {}),
  });
  const listsCandidates = [...train, ...test].some((p) => taskOf(p).candidates !== undefined);
  return {
    env: env as unknown as Environment<unknown>,
    train,
    test,
    heldOut: new Map([[dataset, test]]),
    ...(skipped ? { skipped } : {}),
    ...(listsCandidates ? { candidates: serverCandidates } : {}),
  };
}

/** Every task's prompt from its first observation; the tasks a server refuses are skipped, counted and named (first-observations.ts). */
async function firstPrompts(
  servers: readonly RemoteServer[],
  s: SharedSettings,
  numberParam: NumberParam,
  dataset: string,
): Promise<{ train: Prompt[]; test: Prompt[]; skipped: { refused: number; of: number } }> {
  const where = `env.kind ${dataset}`;
  const trainTasks = resolveTasks(s.tasks, numberParam, `${where} env.tasks`);
  const testTasks = s.testTasks ? resolveTasks(s.testTasks, numberParam, `${where} env.testTasks`) : [];
  const clash = testTasks.find((t) => trainTasks.some((u) => u.id === t.id));
  if (clash) throw new Error(`${where}: task "${clash.id}" is in both env.tasks and env.testTasks`);
  const { accepted, refused } = await firstObservations(servers, [...trainTasks, ...testTasks], s.sessions, s.timeoutMs);
  if (refused.length > 0) process.stderr.write(`trace-rl: ${escapeControl(refusedTasksLine(refused, trainTasks.length + testTasks.length, where))}\n`);
  const isTest = new Set(testTasks.map((t) => t.id));
  const train = accepted.filter((a) => !isTest.has(a.task.id)).map((a) => taskPrompt(a.task, a.first, dataset, s.questionAfter));
  const test = accepted.filter((a) => isTest.has(a.task.id)).map((a) => taskPrompt(a.task, a.first, dataset, s.questionAfter));
  const first = servers[0]!;
  if (train.length === 0) {
    const firstRefusal = refused.find((r) => !isTest.has(r.task.id))!.message;
    // FastAPI answers a reset body without the field it requires with 422: the numbered task went into the wrong field.
    const hint = / HTTP 422: /.test(firstRefusal)
      ? ` (a 422 at reset: the server may read the task's number from another field than "${numberParam}": set env.taskField)`
      : '';
    throw new RemoteServerError(
      `${first.protocol} server ${first.url}${servers.length > 1 ? ` (and ${servers.length - 1} more)` : ''}: all ${trainTasks.length} training tasks were refused at setup, none is left to train on${hint}; the first: ${firstRefusal}`,
    );
  }
  return { train, test, skipped: { refused: refused.length, of: trainTasks.length + testTasks.length } };
}

/**
 * The embedded policy's choices at a prefix: what the server listed after the prefix's last turn
 * (kept on the turn), or at the reset (kept on the prompt). A pure function of (prompt, turns).
 */
export const serverCandidates: CandidateSource = (prompt: Prompt, turns) => {
  const listed = turns.length > 0 ? turns[turns.length - 1]!.env?.candidates : taskOf(prompt).candidates;
  return listed ?? { search: [], answer: [] };
};
