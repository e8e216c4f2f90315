import type { TokenSpan } from '../../tree/types.ts';

/**
 * Reading an OpenAI-format response, with the extras inference servers add. Field names used:
 *  - text: `choices[0].message.content` (chat) or `choices[0].text` (completions);
 *  - per-token log-probabilities: chat `choices[0].logprobs.content[i].logprob` (request
 *    `logprobs: true`), completions `choices[0].logprobs.token_logprobs[i]` (request `logprobs: 0`);
 *  - token ids: vLLM (≥ 0.10.2) returns `choices[0].token_ids` when the request sets
 *    `return_token_ids: true`; with `return_tokens_as_token_ids: true` the logprob tokens are strings
 *    `"token_id:<id>"`, which we also read;
 *  - the matched stop string: vLLM's `choices[0].stop_reason` (a string when a stop string matched).
 */
export interface ParsedResponse {
  text: string;
  finishReason?: string;
  stopReason?: string;
  logprobs?: number[];
  tokenIds?: number[];
  completionTokens?: number;
  /** Chat mode: the reply's tool calls (`choices[0].message.tool_calls`), when it made any. */
  toolCalls?: { id: string; name: string; arguments: string }[];
}

/** The response was not a usable completion (no choices, wrong types). */
export class MalformedResponseError extends Error {
  override name = 'MalformedResponseError';
}

type Json = Record<string, unknown>;
const isObj = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
/** The array itself when every element is a number (no copy: the parsed body is ours). */
function numbers(x: unknown): number[] | undefined {
  if (!Array.isArray(x)) return undefined;
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== 'number') return undefined;
  return x as number[];
}

export function parseResponse(body: unknown, mode: 'chat' | 'completions'): ParsedResponse {
  if (!isObj(body) || !Array.isArray(body.choices) || body.choices.length === 0 || !isObj(body.choices[0])) {
    throw new MalformedResponseError('response has no choices[0]');
  }
  const choice = body.choices[0] as Json;
  const toolCalls = mode === 'chat' && isObj(choice.message) && Array.isArray(choice.message.tool_calls) ? readToolCalls(choice.message.tool_calls) : undefined;
  // A reply that only calls tools may have null content.
  const text = mode === 'chat' ? (isObj(choice.message) ? (choice.message.content ?? (toolCalls ? '' : undefined)) : undefined) : choice.text;
  if (typeof text !== 'string') throw new MalformedResponseError(`response choices[0].${mode === 'chat' ? 'message.content' : 'text'} is not a string`);
  const out: ParsedResponse = { text };
  if (toolCalls && toolCalls.length > 0) out.toolCalls = toolCalls;
  if (typeof choice.finish_reason === 'string') out.finishReason = choice.finish_reason;
  if (typeof choice.stop_reason === 'string') out.stopReason = choice.stop_reason;
  // Token strings matter only when the server sent no ids (vLLM's `token_id:<id>` strings): read them
  // then, not on every call.
  let tokenEntries: unknown[] | undefined;
  let chatEntries: Json[] | undefined;
  if (isObj(choice.logprobs)) {
    const lp = choice.logprobs;
    if (mode === 'chat' && Array.isArray(lp.content)) {
      chatEntries = lp.content.filter(isObj);
      out.logprobs = chatEntries.map((e) => Number(e.logprob));
    } else if (Array.isArray(lp.token_logprobs)) {
      out.logprobs = numbers(lp.token_logprobs) ?? lp.token_logprobs.map((v) => Number(v));
      if (Array.isArray(lp.tokens)) tokenEntries = lp.tokens;
    }
  }
  const ids = numbers(choice.token_ids);
  if (ids) out.tokenIds = ids;
  else {
    const strings = chatEntries ? chatEntries.map((e) => String(e.token)) : tokenEntries?.map(String);
    if (strings && strings.length > 0 && strings.every((t) => /^token_id:\d+$/.test(t))) out.tokenIds = strings.map((t) => Number(t.slice('token_id:'.length)));
  }
  if (isObj(body.usage) && typeof body.usage.completion_tokens === 'number') out.completionTokens = body.usage.completion_tokens;
  return out;
}

/**
 * Generated-token span (mask all 1) when ids and logprobs line up; undefined otherwise. `prompt` is set
 * here rather than added after: the span lives as long as its tree, and a field added to an object
 * after it was made costs a second object (its property store) for that whole time.
 */
export function tokenSpan(r: ParsedResponse, prompt: 'ids' | 'text'): TokenSpan | undefined {
  if (!r.tokenIds) return undefined;
  const logprobs = r.logprobs && r.logprobs.length === r.tokenIds.length ? r.logprobs : undefined;
  if (!logprobs) return undefined;
  return { ids: r.tokenIds, logprobs, mask: allSampled(logprobs.length), prompt };
}

/**
 * A mask of `n` ones, shared and frozen: every turn of a completion has one, it lives as long as its
 * tree, and it says only "all sampled" (a span that needs zeros gets a mask of its own).
 */
export function allSampled(n: number): number[] {
  if (n > MAX_SHARED_MASK) return new Array<number>(n).fill(1);
  let mask = sharedMasks[n];
  if (mask === undefined) sharedMasks[n] = mask = Object.freeze(new Array<number>(n).fill(1)) as number[];
  return mask;
}

/**
 * Longest shared mask; longer spans get a mask each. The server decides a reply's length, so the masks
 * kept must stay small whatever lengths it sends: at most 1,024 of them, 4 MB together.
 */
const MAX_SHARED_MASK = 1024;
const sharedMasks: number[][] = [];

/**
 * Servers strip the stop string from the text; put the closing tag back so the turn reads like the
 * model wrote it. Only when generation stopped on a stop string and the text has the open tag but not
 * its close.
 * `text`: the reply's text where it is not `r.text` (token mode decodes its ids).
 */
export function restoreStopTag(r: ParsedResponse, stops: readonly string[], text = r.text): string {
  if (r.finishReason !== 'stop') return text;
  if (stops.some((s) => text.endsWith(s))) return text;
  if (r.stopReason && stops.includes(r.stopReason)) return text + r.stopReason;
  // No stop_reason (OpenAI, llama.cpp): close the last opened action tag that has no close.
  let best: { at: number; stop: string } | undefined;
  for (const stop of stops) {
    const open = stop.replace('</', '<');
    const at = text.lastIndexOf(open);
    if (at >= 0 && text.indexOf(stop, at) < 0 && (!best || at > best.at)) best = { at, stop };
  }
  return best ? text + best.stop : text;
}

function readToolCalls(list: unknown[]): { id: string; name: string; arguments: string }[] {
  return list.map((c, i) => {
    if (!isObj(c) || !isObj(c.function) || typeof c.function.name !== 'string') {
      throw new MalformedResponseError(`response choices[0].message.tool_calls[${i}] has no function.name`);
    }
    const args = c.function.arguments;
    return {
      id: typeof c.id === 'string' ? c.id : `call_${i}`,
      name: c.function.name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    };
  });
}
