/**
 * AgentGym's environment-server protocol (WooooDyy/AgentGym: each agentenv-NAME folder's server.py), as pure
 * functions: the requests a client sends and the reading of the answers. One environment id is one
 * session on the server:
 *   POST /create                      → the new id: a number, or {"id": n, "observation", …}
 *   POST /reset {id, data_idx}        → {"id", "observation", "reward", "done"} (some servers: the observation text)
 *   POST /step {id, action}           → {"observation", "reward", "done"} (+ "info" on some servers)
 *   GET  /observation?id=n            → the current observation text
 *   POST /close {id}                  (not every server has it: a 404 there is no failure)
 * Servers report their own failures as HTTP 200 with {"error": "..."} (the environment wrappers catch
 * every exception); FastAPI's validation errors are HTTP 422 {"detail"}. No route saves or restores an
 * environment's state: a prefix is reached again by replay, or by trace-rl's fork extension where a
 * server offers it (fork.ts: "keep" in /step's body, POST /fork {<session key>, key}, GET /fork).
 *
 * Dialects (AgentGymDialect): the session key is `id` (TextCraft, BabyAI, SciWorld, ALFWorld) or
 * `env_idx` (WebShop, SQLGym, SearchQA, the tool environments, WebArena: in every body and query,
 * /create answers a bare number, /reset answers `[observation, null]`, /step `{"state", …}`, and
 * SQLGym has no /close); every route may sit under a path prefix (`/webshop/create`, a server that
 * mounts several environments). The field a numbered task goes into at /reset differs too
 * (`data_idx`, WebShop's `session_id`, SQLGym's `item_id`, the tool environments' `id`): that is the
 * kind's `env.taskField` (tasks.ts). Candidate actions may come from a route of the server's own
 * (WebShop's `GET /available_actions?env_idx=`): parseAgentGymCandidates.
 */
import { z } from 'zod';
import { keptKeySchema } from './fork.ts';
import { clipped, complaint, jsonRecord, RemoteProtocolError, RemoteServerError, rewardOf, type RemoteReply } from './reply.ts';

export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Path and query, e.g. `/observation?id=3`. */
  path: string;
  body?: Record<string, unknown>;
}

export type AgentGymId = number | string;

export interface AgentGymDialect {
  /** The session key's name in bodies and queries. */
  key: 'id' | 'env_idx';
  /** Put before every route ('' or e.g. '/webshop'). */
  prefix: string;
}

export const ID_DIALECT: AgentGymDialect = { key: 'id', prefix: '' };

/** The requests of a dialect (the fork extension's under the same key and prefix). */
export function agentGymRoutes({ key, prefix }: AgentGymDialect) {
  const query = (id: AgentGymId) => `${key}=${encodeURIComponent(String(id))}`;
  return {
    create: (): HttpRequest => ({ method: 'POST', path: `${prefix}/create`, body: {} }),
    /** A task's parameters (`{data_idx: n}` for an index) go into the body beside the session key. */
    reset: (id: AgentGymId, params: Record<string, unknown>): HttpRequest => ({ method: 'POST', path: `${prefix}/reset`, body: { ...params, [key]: id } }),
    step: (id: AgentGymId, action: string, keep = false): HttpRequest => ({
      method: 'POST',
      path: `${prefix}/step`,
      body: keep ? { [key]: id, action, keep } : { [key]: id, action },
    }),
    fork: (id: AgentGymId, kept: string): HttpRequest => ({ method: 'POST', path: `${prefix}/fork`, body: { [key]: id, key: kept } }),
    forkOffer: (): HttpRequest => ({ method: 'GET', path: `${prefix}/fork` }),
    observation: (id: AgentGymId): HttpRequest => ({ method: 'GET', path: `${prefix}/observation?${query(id)}` }),
    close: (id: AgentGymId): HttpRequest => ({ method: 'POST', path: `${prefix}/close`, body: { [key]: id } }),
    /** A route listing the current candidate actions, e.g. `/available_actions`. */
    candidates: (id: AgentGymId, route: string): HttpRequest => ({ method: 'GET', path: `${prefix}${route}?${query(id)}` }),
  };
}

/** The requests of the `id` dialect with no prefix (TextCraft's). */
export const agentGymRequests = agentGymRoutes(ID_DIALECT);

/** The server's own error payload (`{"error": "..."}` with HTTP 200), thrown as RemoteServerError. */
function refuseError(raw: unknown, where: string): void {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'error' in raw) {
    const e = (raw as { error: unknown }).error;
    throw new RemoteServerError(`${where}: the server refused: ${complaint(typeof e === 'string' ? e : JSON.stringify(e))}`);
  }
}

const id = z.union([z.number().int().nonnegative(), z.string().min(1).max(200)]);

/** The id /create answered. */
export function parseAgentGymCreate(raw: unknown, where: string): AgentGymId {
  refuseError(raw, where);
  const direct = id.safeParse(raw);
  if (direct.success) return direct.data;
  const wrapped = z.object({ id }).passthrough().safeParse(raw);
  if (wrapped.success) return wrapped.data.id;
  throw new RemoteProtocolError(`${where}: /create answered neither an id nor {"id": …}: ${clipped(JSON.stringify(raw) ?? String(raw))}`);
}

const replyObject = z
  .object({
    observation: z.string().optional(),
    // WebShop's server names it `state`.
    state: z.string().optional(),
    reward: z.unknown().optional(),
    done: z.boolean().optional(),
    info: jsonRecord.nullable().optional(),
    kept: keptKeySchema.optional(),
  })
  .passthrough();

/**
 * A /reset or /step answer. `observation` may be missing from a reset answer (servers that answer
 * only the id): then undefined is returned and the caller asks GET /observation.
 */
export function parseAgentGymReply(raw: unknown, where: string, kind: 'reset' | 'step'): RemoteReply | undefined {
  refuseError(raw, where);
  if (typeof raw === 'string') return { observation: raw, done: false, info: {} };
  // The env_idx dialect's reset: `[observation, null]` (a Python tuple).
  if (kind === 'reset' && Array.isArray(raw) && typeof raw[0] === 'string') return { observation: raw[0], done: false, info: {} };
  const o = replyObject.safeParse(raw);
  if (!o.success)
    throw new RemoteProtocolError(`${where}: /${kind} answered ${clipped(JSON.stringify(raw) ?? String(raw))}; expected {"observation", "reward", "done"}`);
  const text = o.data.observation ?? o.data.state;
  if (text === undefined) {
    if (kind === 'reset') return undefined;
    throw new RemoteProtocolError(`${where}: /step answered no "observation" text`);
  }
  if (kind === 'step' && o.data.done === undefined) throw new RemoteProtocolError(`${where}: /step answered no "done"`);
  const reward = rewardOf(o.data.reward, where);
  return {
    observation: text,
    ...(reward === undefined ? {} : { reward }),
    done: o.data.done ?? false,
    info: o.data.info ?? {},
    ...(o.data.kept !== undefined ? { kept: o.data.kept } : {}),
  };
}

/** GET /observation's answer: the text (a JSON string), or {"observation": text}. */
export function parseAgentGymObservation(raw: unknown, where: string): string {
  refuseError(raw, where);
  if (typeof raw === 'string') return raw;
  const o = z.object({ observation: z.string() }).passthrough().safeParse(raw);
  if (o.success) return o.data.observation;
  throw new RemoteProtocolError(`${where}: /observation answered ${clipped(JSON.stringify(raw) ?? String(raw))}; expected the observation text`);
}

/**
 * A candidates route's answer as action texts: a list of texts, or WebShop's
 * `{"has_search_bar", "clickables": [...]}`, whose clickables are sent as `click[<name>]` (a search
 * needs a query of the policy's own, so it is not listed).
 */
export function parseAgentGymCandidates(raw: unknown, where: string): string[] {
  refuseError(raw, where);
  const texts = z.array(z.union([z.string(), z.number()]).transform(String));
  const list = texts.safeParse(raw);
  if (list.success) return list.data;
  const webshop = z
    .object({ clickables: z.array(z.string()) })
    .passthrough()
    .safeParse(raw);
  if (webshop.success) return webshop.data.clickables.map((c) => `click[${c}]`);
  throw new RemoteProtocolError(
    `${where}: the candidates route answered ${clipped(JSON.stringify(raw) ?? String(raw))}; expected a list of action texts or {"clickables": [...]}`,
  );
}
