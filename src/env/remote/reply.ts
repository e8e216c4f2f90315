/**
 * What a server environment answers to a reset or a step, whichever protocol carried it (OpenEnv,
 * AgentGym), and the project's reading of its side channel (`metadata` in OpenEnv, `info` in AgentGym):
 * candidate actions, why the episode ended, whether the action was invalid. Pure functions: the
 * conformance test drives them with recorded answers.
 */
import { z } from 'zod';
import type { TurnCandidates } from '../../tree/types.ts';
import { escapeControl } from '../../util/escape-control.ts';
import { jsonNestingPast } from '../../util/json-depth.ts';

/** One answer of a server, read out of its protocol's envelope. */
export interface RemoteReply {
  /** The observation's text (the prompt, at reset). */
  observation: string;
  /** The server's raw reward for the step (absent when it sent none). */
  reward?: number;
  done: boolean;
  /** The side channel (OpenEnv `metadata`, AgentGym `info`); {} when none. */
  info: Record<string, unknown>;
  /** The key of the state a forkable server kept at this step, when the step asked it to (fork.ts). */
  kept?: string;
}

/** A server answered something no protocol reading accepts: the message names the server and the field. */
export class RemoteProtocolError extends Error {
  override name = 'RemoteProtocolError';
  /** A server that answers out of protocol would again: the engine does not retry it (src/rollout/retried-calls.ts). */
  readonly retryable = false;
}

/** The server said no (an error envelope, an HTTP error): the message is the server's, bounded. */
export class RemoteServerError extends Error {
  override name = 'RemoteServerError';
  constructor(
    message: string,
    /** The server's error code, where it gave one (OpenEnv's CAPACITY_REACHED, …). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Longest server text kept in an error message. */
const MESSAGE_CHARS = 300;

/** A server's text as it goes into a message: bounded, its control characters escaped. */
export function clipped(text: string): string {
  return escapeControl(text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 3)}...` : text);
}

/** A server's complaint as a message quotes it: clipped, and said to be empty when it is (`{"error": ""}`). */
export function complaint(text: string): string {
  return text.trim() === '' ? '(an empty error message)' : clipped(text);
}

/** Deepest nesting a server's JSON answer may have (real answers nest a handful of levels). */
export const MAX_JSON_DEPTH = 64;

/** A server's JSON text parsed, refused (naming the bound) when it nests past MAX_JSON_DEPTH or is not JSON. */
export function parseServerJson(text: string, where: string): unknown {
  const past = jsonNestingPast(text, MAX_JSON_DEPTH);
  if (past) throw new RemoteProtocolError(`${where}: the answer nests deeper than ${MAX_JSON_DEPTH} levels (at character ${past.at}); refused`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RemoteProtocolError(`${where}: answered something that is not JSON (${(e as Error).message}): ${clipped(text)}`);
  }
}

/** A JSON value, bounded in depth by parseServerJson. */
export const jsonRecord = z.record(z.string(), z.unknown());

/** Most candidate actions a server may list for one turn. */
export const MAX_CANDIDATES = 1000;
const candidateList = z.array(z.string().max(10_000)).max(MAX_CANDIDATES);
const candidateAction = z.object({ type: z.string().min(1).max(200), input: z.string().max(10_000) }).strict();
/**
 * Candidate actions as a server may list them: a list of action texts (each sent as it is, e.g.
 * AgentGym's `click[Buy Now]`), or the Search-R1 split `{search, answer}` (with other actions as `tool`).
 */
const candidatesSchema = z.union([
  candidateList.transform((texts): TurnCandidates => ({ search: [], answer: [], tool: texts.map((input) => ({ type: 'act', input })) })),
  z
    .object({ search: candidateList.default([]), answer: candidateList.default([]), tool: z.array(candidateAction).max(1000).optional() })
    .strict()
    .transform((c): TurnCandidates => ({ search: c.search, answer: c.answer, ...(c.tool ? { tool: c.tool } : {}) })),
]);

/** What the project reads from a reply's side channel (each field optional, each checked). */
export interface ReplyInfo {
  candidates?: TurnCandidates;
  /** Why the episode ended ('answer', 'turn_limit', …), when the server says. */
  reason?: string;
  invalid?: boolean;
}

/**
 * The side channel's known fields: `candidates` (see candidatesSchema), `reason` (a short word),
 * `invalid` (a boolean). A known field of the wrong shape is an error naming it (a server that means
 * to list candidates and lists them wrongly should hear so); unknown fields are ignored.
 */
export function replyInfo(info: Record<string, unknown>, where: string): ReplyInfo {
  const out: ReplyInfo = {};
  if (info.candidates !== undefined && info.candidates !== null) {
    if (Array.isArray(info.candidates) && info.candidates.length > MAX_CANDIDATES)
      throw new RemoteProtocolError(`${where}: candidates: ${info.candidates.length} listed, more than the ${MAX_CANDIDATES} a turn may offer; refused`);
    const c = candidatesSchema.safeParse(info.candidates);
    if (!c.success)
      throw new RemoteProtocolError(
        `${where}: candidates must be a list of action texts or {search: [...], answer: [...]} (${c.error.issues[0]?.message ?? 'bad shape'})`,
      );
    out.candidates = c.data;
  }
  if (typeof info.reason === 'string' && info.reason.length > 0 && info.reason.length <= 64) out.reason = info.reason;
  if (info.invalid === true) out.invalid = true;
  return out;
}

/** A reward as servers send it: a number, a boolean (OpenEnv allows bool), or nothing. */
export function rewardOf(raw: unknown, where: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
  throw new RemoteProtocolError(`${where}: reward must be a finite number, a boolean or null, got ${clipped(JSON.stringify(raw) ?? String(raw))}`);
}
