/**
 * OpenEnv's wire format (meta-pytorch/OpenEnv, src/openenv/core/env_server/http_server.py and
 * types.py), as pure functions: the messages a client sends on the `/ws` WebSocket session and the
 * reading of what the server answers. One session is one environment instance on the server:
 *   → {"type": "reset", "data": {seed?, episode_id?, …kwargs}}   ← {"type": "observation", "data": {observation, reward, done, metadata?}}
 *   → {"type": "step", "data": <action object>}                  ← the same observation envelope
 *   → {"type": "state"}                                          ← {"type": "state", "data": {episode_id, step_count, …}}
 *   → {"type": "close"}                                          (the server ends the session)
 * and any failure ← {"type": "error", "data": {"message", "code"}} (code CAPACITY_REACHED when the
 * server already holds max_concurrent_envs sessions, then it closes the socket). `observation` is the
 * environment's own fields (its Observation model minus reward, done and metadata). OpenEnv's own
 * serializer never sends `metadata`; a server written against the protocol may (candidate actions:
 * reply.ts), and `trace-rl env serve` does when it is not empty. HTTP: GET /health → {"status"}, GET /schema → {action, observation, state}
 * JSON schemas, GET /metadata → {name, description, …}. The protocol has no way to save or restore a
 * session's state (`state` only reads it): a prefix is reached again by replay, or by trace-rl's fork
 * extension where a server offers it (fork.ts: "keep" on a step, a "fork" message opening a session).
 */
import { z } from 'zod';
import { keptKeySchema } from './fork.ts';
import { clipped, complaint, jsonRecord, parseServerJson, RemoteProtocolError, RemoteServerError, rewardOf, type RemoteReply } from './reply.ts';

/** The message that resets a session with a task's parameters (OpenEnv passes them as keyword arguments). */
export function openEnvResetMessage(params: Record<string, unknown>): string {
  return JSON.stringify({ type: 'reset', data: params });
}

/** `keep`: the fork extension's request to keep the state the step reaches (sent only to a server that offers fork). */
export function openEnvStepMessage(action: Record<string, unknown>, keep = false): string {
  return JSON.stringify(keep ? { type: 'step', data: action, keep: true } : { type: 'step', data: action });
}

/** The fork extension's first message of a new session: start from the state kept under `key`. */
export function openEnvForkMessage(key: string): string {
  return JSON.stringify({ type: 'fork', data: { key } });
}

export function openEnvStateMessage(): string {
  return JSON.stringify({ type: 'state' });
}

export function openEnvCloseMessage(): string {
  return JSON.stringify({ type: 'close' });
}

const observationEnvelope = z.object({
  type: z.literal('observation'),
  data: z.object({
    observation: jsonRecord,
    reward: z.unknown().optional(),
    done: z.boolean().optional(),
    metadata: jsonRecord.nullable().optional(),
    kept: keptKeySchema.optional(),
  }),
});
const stateEnvelope = z.object({ type: z.literal('state'), data: jsonRecord });
const errorEnvelope = z.object({ type: z.literal('error'), data: z.object({ message: z.string().optional(), code: z.string().optional() }).passthrough() });

export type OpenEnvMessage = { kind: 'observation'; reply: RemoteReply } | { kind: 'state'; state: Record<string, unknown> };

/**
 * Reads one text frame of the server. An error envelope throws RemoteServerError (with OpenEnv's code);
 * anything that is no known envelope throws RemoteProtocolError naming what was wrong.
 * `observationField` picks the observation's text (see observationText).
 */
export function parseOpenEnvMessage(text: string, where: string, observationField?: string, candidatesField?: string): OpenEnvMessage {
  const raw = parseServerJson(text, where);
  const type = (raw as { type?: unknown } | null)?.type;
  if (type === 'error') {
    const err = errorEnvelope.safeParse(raw);
    const data = err.success ? err.data.data : {};
    throw new RemoteServerError(
      `${where}: the server refused: ${complaint(data.message ?? JSON.stringify(raw))}${data.code ? ` (${clipped(data.code)})` : ''}`,
      data.code,
    );
  }
  if (type === 'state') {
    const s = stateEnvelope.safeParse(raw);
    if (!s.success) throw new RemoteProtocolError(`${where}: a state message without a data object`);
    return { kind: 'state', state: s.data.data };
  }
  const o = observationEnvelope.safeParse(raw);
  if (!o.success) {
    const issue = o.error.issues[0];
    throw new RemoteProtocolError(
      `${where}: expected {"type": "observation", "data": {"observation": {...}, "reward", "done"}}; ${issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'bad shape'}`,
    );
  }
  const data = o.data.data;
  return {
    kind: 'observation',
    reply: {
      observation: observationText(data.observation, where, observationField),
      ...optionalReward(rewardOf(data.reward, where)),
      done: data.done ?? false,
      info: withListedCandidates(data.metadata ?? {}, data.observation, where, candidatesField),
      ...(data.kept !== undefined ? { kept: data.kept } : {}),
    },
  };
}

/**
 * The side channel with the candidates an observation field lists (OpenEnv environments put them in
 * the observation, e.g. `legal_actions`), as action texts: a list of texts or numbers. A missing or
 * null field lists none; any other shape is an error naming the field.
 */
function withListedCandidates(info: Record<string, unknown>, observation: Record<string, unknown>, where: string, field?: string): Record<string, unknown> {
  if (field === undefined) return info;
  const listed = observation[field];
  if (listed === undefined || listed === null) return info;
  const texts = z.array(z.union([z.string(), z.number()]).transform(String)).safeParse(listed);
  if (!texts.success) throw new RemoteProtocolError(`${where}: the observation's "${field}" (env.candidatesField) is not a list of action texts or numbers`);
  return { ...info, candidates: texts.data };
}

function optionalReward(r: number | undefined): { reward?: number } {
  return r === undefined ? {} : { reward: r };
}

/**
 * The observation's text: the field `field` when given (it must be a string), else the observation's
 * only string field. An observation with several string fields and no `field` is an error naming them
 * (set env.observationField), never a guess.
 */
export function observationText(observation: Record<string, unknown>, where: string, field?: string): string {
  if (field !== undefined) {
    const v = observation[field];
    if (typeof v !== 'string')
      throw new RemoteProtocolError(
        `${where}: the observation has no string field "${field}" (env.observationField); its fields: ${Object.keys(observation).join(', ') || 'none'}`,
      );
    return v;
  }
  const strings = Object.entries(observation).filter(([, v]) => typeof v === 'string');
  if (strings.length === 1) return strings[0]![1] as string;
  throw new RemoteProtocolError(
    `${where}: the observation has ${strings.length === 0 ? 'no string field' : `several string fields (${strings.map(([k]) => k).join(', ')})`}; name the one the agent reads with env.observationField`,
  );
}

const schemaResponse = z.object({ action: jsonRecord, observation: jsonRecord.optional(), state: jsonRecord.optional() });
const propertySchema = z.object({ type: z.unknown().optional() }).passthrough();

/**
 * The action field a turn's text goes into, read from GET /schema's action JSON schema: `field` when
 * given (it must be a string property), else the schema's only string property besides `metadata`
 * (OpenEnv's base Action field). Any other shape is an error naming the properties.
 */
export function actionFieldFromSchema(schema: unknown, where: string, field?: string): string {
  const parsed = schemaResponse.safeParse(schema);
  if (!parsed.success) throw new RemoteProtocolError(`${where}: GET /schema did not answer {action, observation, state} JSON schemas`);
  const props = z.record(z.string(), propertySchema).safeParse(parsed.data.action.properties ?? {});
  if (!props.success) throw new RemoteProtocolError(`${where}: the action schema's properties are not an object`);
  // Pydantic writes an enum field as {"$ref": "#/$defs/Name"} and an optional one as {"anyOf": [...]}.
  const defs = z.record(z.string(), propertySchema).safeParse(parsed.data.action.$defs ?? {});
  const isStringSchema = (p: unknown, depth: number): boolean => {
    const s = propertySchema.safeParse(p);
    if (!s.success || depth > 4) return false;
    const { type, $ref, anyOf } = s.data as { type?: unknown; $ref?: unknown; anyOf?: unknown };
    if (type === 'string' || (Array.isArray(type) && type.includes('string'))) return true;
    if (typeof $ref === 'string' && $ref.startsWith('#/$defs/') && defs.success) return isStringSchema(defs.data[$ref.slice('#/$defs/'.length)], depth + 1);
    return Array.isArray(anyOf) && anyOf.some((branch) => isStringSchema(branch, depth + 1));
  };
  const isString = (name: string) => isStringSchema(props.data[name], 0);
  const names = Object.keys(props.data).filter((k) => k !== 'metadata');
  if (field !== undefined) {
    if (!isString(field))
      throw new RemoteProtocolError(`${where}: the action schema has no string field "${field}" (env.action.field); its fields: ${names.join(', ') || 'none'}`);
    return field;
  }
  const strings = names.filter(isString);
  if (strings.length === 1) return strings[0]!;
  throw new RemoteProtocolError(
    `${where}: the action has ${strings.length === 0 ? 'no string field' : `several string fields (${strings.join(', ')})`}; name the one a turn's text goes into with env.action.field`,
  );
}

/** The action object a turn's text becomes: `{[field]: text}` (OpenEnv fills the other fields' defaults). */
export function openEnvAction(field: string, text: string): Record<string, unknown> {
  return { [field]: text };
}
