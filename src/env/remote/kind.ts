/**
 * The two server-environment kinds, `env.kind: openenv` and `env.kind: agentgym` (docs/environments.md
 * "Your environment as a server"). Building one reads the tasks, checks the server (OpenEnv: GET
 * /schema for the action's text field) and fetches every task's first observation once (its prompt),
 * `env.sessions` at a time.
 */
import { z } from 'zod';
import type { TurnCandidates } from '../../tree/types.ts';
import type { CandidateSource, Environment } from '../types.ts';
import { envKind, kindObject, type EnvironmentSetup } from '../kind.ts';
import { AgentGymServer } from './agentgym-session.ts';
import { actionFieldFromSchema } from './openenv-protocol.ts';
import { OpenEnvServer } from './openenv-session.ts';
import { replyInfo } from './reply.ts';
import { RemoteEnv } from './remote-env.ts';
import { isCapacityRefusal, SessionLost, type RemoteLimits, type RemoteServer } from './session.ts';
import { resolveTasks, taskOf, taskPrompt, tasksSchema, type NumberParam, type Task } from './tasks.ts';
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
};

const openenv = kindObject('openenv', {
  ...shared,
  observationField: z.string().min(1).optional().describe('openenv: the observation’s string field the agent reads (default: its only string field).'),
});
const agentgym = kindObject('agentgym', shared);

type SharedSettings = Omit<z.output<typeof agentgym>, 'kind'>;

export const openEnvKind = envKind('openenv', openenv, {
  async build(s, { maxTurns }) {
    const limits = limitsOf(s);
    // The servers of a fleet serve one environment: the first one's schema stands for all.
    const probe = new OpenEnvServer({ ...limits, url: s.url[0]!, actionField: s.action.field ?? '' });
    let schema: unknown;
    try {
      schema = await probe.get('/schema');
    } catch (e) {
      if (s.action.field === undefined) throw new Error(`openenv server ${probe.url}: GET /schema failed (${(e as Error).message}); give env.action.field`);
    }
    const actionField = schema === undefined ? s.action.field! : actionFieldFromSchema(schema, `openenv server ${probe.url}`, s.action.field);
    const servers = s.url.map(
      (url) => new OpenEnvServer({ ...limits, url, actionField, ...(s.observationField ? { observationField: s.observationField } : {}) }),
    );
    return setupOver(servers, s, maxTurns, 'seed', 'openenv');
  },
});

export const agentGymKind = envKind('agentgym', agentgym, {
  async build(s, { maxTurns }) {
    return setupOver(
      s.url.map((url) => new AgentGymServer({ ...limitsOf(s), url })),
      s,
      maxTurns,
      'data_idx',
      'agentgym',
    );
  },
});

function limitsOf(s: SharedSettings): RemoteLimits {
  return { timeoutMs: s.timeoutMs, maxReplyBytes: s.maxReplyBytes };
}

async function setupOver(
  servers: readonly RemoteServer[],
  s: SharedSettings,
  maxTurns: number,
  numberParam: NumberParam,
  dataset: string,
): Promise<EnvironmentSetup> {
  const where = `env.kind ${dataset}`;
  const trainTasks = resolveTasks(s.tasks, numberParam, `${where} env.tasks`);
  const testTasks = s.testTasks ? resolveTasks(s.testTasks, numberParam, `${where} env.testTasks`) : [];
  const clash = testTasks.find((t) => trainTasks.some((u) => u.id === t.id));
  if (clash) throw new Error(`${where}: task "${clash.id}" is in both env.tasks and env.testTasks`);
  const firsts = await firstObservations(servers, [...trainTasks, ...testTasks], s.sessions);
  const prompts = [...trainTasks, ...testTasks].map((t, i) => taskPrompt(t, firsts[i]!, dataset, s.questionAfter));
  const train = prompts.slice(0, trainTasks.length);
  const test = prompts.slice(trainTasks.length);
  const fork = s.fork === 'auto' && s.branching === 'replay' ? await Promise.all(servers.map((server) => server.forkOffer())) : undefined;
  const env = new RemoteEnv({
    server: servers,
    maxTurns,
    action: s.action.text,
    successThreshold: s.successThreshold,
    sessions: s.sessions,
    branching: s.branching,
    ...(fork ? { fork } : {}),
  });
  const listsCandidates = firsts.some((f) => f.candidates !== undefined);
  return {
    env: env as unknown as Environment<unknown>,
    train,
    test,
    heldOut: new Map([[dataset, test]]),
    ...(listsCandidates ? { candidates: serverCandidates } : {}),
  };
}

/**
 * The embedded policy's choices at a prefix: what the server listed after the prefix's last turn
 * (kept on the turn), or at the reset (kept on the prompt). A pure function of (prompt, turns).
 */
export const serverCandidates: CandidateSource = (prompt: Prompt, turns) => {
  const listed = turns.length > 0 ? turns[turns.length - 1]!.env?.candidates : taskOf(prompt).candidates;
  return listed ?? { search: [], answer: [] };
};

/**
 * Each task's first observation (and the candidates its reset listed): one session per task, reset,
 * closed, `sessions` at a time per server, the tasks dealt over the servers; a dropped connection or a
 * full server is retried a few times, each time on the next server.
 */
async function firstObservations(
  servers: readonly RemoteServer[],
  tasks: readonly Task[],
  sessions: number,
): Promise<Array<{ observation: string; candidates?: TurnCandidates }>> {
  const out: Array<{ observation: string; candidates?: TurnCandidates }> = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await firstObservation(servers, i, tasks[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(sessions * servers.length, tasks.length) }, worker));
  return out;
}

async function firstObservation(servers: readonly RemoteServer[], i: number, task: Task): Promise<{ observation: string; candidates?: TurnCandidates }> {
  for (let attempt = 1; ; attempt++) {
    const server = servers[(i + attempt - 1) % servers.length]!;
    const where = `${server.protocol} server ${server.url} (task "${task.id}")`;
    const session = await server.open().catch((e: unknown) => e as Error);
    try {
      if (session instanceof Error) throw session;
      const reply = await session.reset(task.params);
      const info = replyInfo(reply.info, where);
      return { observation: reply.observation, ...(info.candidates ? { candidates: info.candidates } : {}) };
    } catch (e) {
      if (!(e instanceof SessionLost || isCapacityRefusal(e)) || attempt >= 4)
        throw new Error(`${where}: the task's first observation: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 250 * 2 ** (attempt - 1)));
    } finally {
      if (!(session instanceof Error)) await session.close();
    }
  }
}
