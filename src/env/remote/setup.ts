/**
 * Building a server environment (`env.kind: openenv` / `agentgym`, docs/environments.md "Your
 * environment as a server"): read the tasks, check the server (OpenEnv: GET /schema for the action's
 * text field) and fetch every task's first observation once (its prompt), `env.sessions` at a time.
 * Loaded by the kinds' build only (kind.ts).
 */
import type { CandidateSource, Environment } from '../types.ts';
import type { EnvBuildContext, EnvironmentSetup } from '../kind.ts';
import { AgentGymServer } from './agentgym-session.ts';
import { actionFieldFromSchema } from './openenv-protocol.ts';
import { OpenEnvServer } from './openenv-session.ts';
import { firstObservations, refusedTasksLine } from './first-observations.ts';
import { RemoteServerError } from './reply.ts';
import { RemoteEnv } from './remote-env.ts';
import type { RemoteLimits, RemoteServer } from './session.ts';
import type { AgentGymSettings, OpenEnvSettings, SharedSettings } from './settings.ts';
import { resolveTasks, taskOf, taskPrompt, type NumberParam } from './tasks.ts';
import { escapeControl } from '../../util/escape-control.ts';
import { controlToken } from '../../http/control.ts';
import type { Prompt } from '../../tree/types.ts';

/** An OpenEnv server's (or fleet's) environment: its action field from GET /schema unless env.action.field names it. */
export async function openEnvSetup(s: OpenEnvSettings, { maxTurns, prompts }: EnvBuildContext): Promise<EnvironmentSetup> {
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
}

/** An AgentGym server's (or fleet's) environment, in the dialect the settings name. */
export async function agentGymSetup(s: AgentGymSettings, { maxTurns, prompts }: EnvBuildContext): Promise<EnvironmentSetup> {
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
