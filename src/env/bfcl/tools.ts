/**
 * How BFCL's function docs reach a model: as OpenAI `tools` (chat mode; BFCL's types mapped to JSON
 * Schema types, `parameters.type` = "object") or inside a prompt (completion mode), where the model
 * answers with `[func(arg=value), ...]`. Also the two ways calls come back: OpenAI tool calls (JSON
 * arguments, turned into Python-call strings as BFCL does with `name(k=repr(v),...)`) and text.
 */
import { jsonDumps, pyRepr } from './py/format.ts';
import { parseCall, parseCallList, parseJson, type ParsedCall } from './py/literal.ts';
import type { FunctionDoc } from './data.ts';

const TYPE_MAP: Record<string, string> = {
  integer: 'integer',
  number: 'number',
  float: 'number',
  string: 'string',
  boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  dict: 'object',
  object: 'object',
  tuple: 'array',
  any: 'string',
  byte: 'integer',
  short: 'integer',
  long: 'integer',
  double: 'number',
  char: 'string',
};

type Schema = Record<string, unknown>;

function convertSchema(s: Schema): Schema {
  const out: Schema = { ...s };
  const t = typeof s.type === 'string' ? s.type : 'string';
  out.type = TYPE_MAP[t] ?? 'string';
  if (t === 'float') out.format = 'float';
  if (s.properties && typeof s.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(s.properties as Record<string, Schema>).map(([k, v]) => [k, convertSchema(v)]));
  }
  if (s.items && typeof s.items === 'object') out.items = convertSchema(s.items as Schema);
  return out;
}

export interface OpenAITool {
  type: 'function';
  function: { name: string; description: string; parameters: Schema };
}

/** BFCL function docs as OpenAI chat-completions tools. */
export function toOpenAITools(docs: readonly FunctionDoc[]): OpenAITool[] {
  return docs.map((d) => {
    const parameters = convertSchema(d.parameters as unknown as Schema);
    parameters.type = 'object';
    return { type: 'function', function: { name: d.name, description: d.description, parameters } };
  });
}

/** A call in BFCL's executable form: `name(k=repr(v), ...)` (positional arguments kept in front). */
export function callString(c: ParsedCall, separator = ', '): string {
  const args = [...c.args.map(pyRepr), ...c.kwargs.map(([k, v]) => `${k}=${pyRepr(v)}`)];
  return `${c.name}(${args.join(separator)})`;
}

/** An OpenAI tool call → BFCL's call string (JSON arguments read with Python's int/float distinction). */
export function toolCallToString(name: string, argumentsJson: string): string {
  const args = parseJson(argumentsJson.trim() === '' ? '{}' : argumentsJson);
  if (!(args instanceof Map)) throw new SyntaxError(`tool call ${name}: arguments are not a JSON object`);
  return callString({ name, args: [], kwargs: [...args].map(([k, v]) => [String(k), v]) }, ',');
}

/** A BFCL call string → an OpenAI tool call's name and JSON arguments (for rebuilding chat history). */
export function stringToToolCall(call: string): { name: string; arguments: string } {
  const c = parseCall(call);
  return { name: c.name, arguments: jsonDumps(new Map(c.kwargs)) };
}

/** Read a completion-mode step: a list of calls, or (when it is not one) a text answer that ends the user turn. */
export function readStepText(text: string): { calls: string[] } | { answer: string } {
  const t = text.trim();
  if (t === '') return { answer: '' };
  try {
    return { calls: parseCallList(t).map((c) => callString(c)) };
  } catch {
    return { answer: t };
  }
}
