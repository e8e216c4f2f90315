/**
 * Runs BFCL call strings against one set of API instances, the way BFCL's executor does: each
 * involved class is instantiated once from the entry's initial config and kept across turns, method
 * names map to the instance that defines them (a later class wins a name clash), and every call yields
 * the text the model sees — the method's result (json.dumps for a dict, str() otherwise) or
 * `Error during execution: <message>`. Calls are parsed as literals and dispatched by name; nothing
 * is evaluated.
 */
import type { ApiContext, BfclApi, Method } from './apis/api.ts';
import { bindArgs } from './apis/api.ts';
import { createApi } from './apis/registry.ts';
import { SharedState } from './apis/shared.ts';
import { parseCall } from './py/literal.ts';
import { pyRepr, resultText } from './py/format.ts';
import { compare } from './py/num.ts';
import { deepCopy, type PyDict, PyError, PySet, type PyValue } from './py/value.ts';
import type { BfclEntry } from './data.ts';

/** BFCL refuses these names before evaluating a call. */
const REFUSED = new Set(['kill', 'exit', 'quit', 'remove', 'unlink', 'popen', 'Popen', 'run']);

export interface SessionOptions {
  shared: SharedState;
  today: ApiContext['today'];
}

export class Session {
  readonly instances = new Map<string, BfclApi>();
  private readonly dispatch = new Map<string, { api: BfclApi; method: Method }>();

  constructor(entry: BfclEntry, options: SessionOptions) {
    const longContext = entry.category === 'long_context';
    for (const className of entry.involvedClasses) {
      const config = entry.initialConfig.get(className);
      const api = createApi(className, {
        config: config instanceof Map ? (deepCopy(config) as PyDict) : new Map(),
        longContext,
        shared: options.shared,
        today: options.today,
      });
      this.instances.set(className, api);
      for (const name of [...api.methods.keys()].sort()) this.dispatch.set(name, { api, method: api.methods.get(name) as Method });
    }
  }

  /** Execute calls in order; one result string per call. */
  run(calls: readonly string[]): string[] {
    return calls.map((call) => this.runOne(call));
  }

  private runOne(call: string): string {
    const head = call.split('(')[0] ?? '';
    const bare = head.includes('.') ? (head.split('.')[1] ?? '') : head;
    if (REFUSED.has(bare.trim())) return `Error during execution: Function call ${bare.trim()} is not allowed.`;
    try {
      const parsed = parseCall(call);
      const target = this.dispatch.get(parsed.name);
      if (!target) throw new PyError('NameError', `name '${parsed.name}' is not defined`);
      const args = bindArgs(`${target.api.className}.${parsed.name}`, target.method, parsed.args, parsed.kwargs);
      return resultText(target.method.call(args));
    } catch (e) {
      if (e instanceof PyError) return `Error during execution: ${e.message}`;
      // A literal we cannot read, or a Python behaviour the port does not model: still an execution error.
      return `Error during execution: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
}

/** Sets have no portable iteration order: show them sorted (as the conformance vectors do). */
function sortedSets(v: PyValue): PyValue {
  if (v instanceof PySet) return [...v.items].sort((a, b) => (compare(a, b, '<') ? -1 : compare(b, a, '<') ? 1 : 0));
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, sortedSets(x)]));
  if (Array.isArray(v)) return v.map(sortedSets);
  return v;
}

/** Python's repr of each instance's public attributes, classes by name: `Class={'attr': value, ...}` per line. */
export function stateText(instances: ReadonlyMap<string, BfclApi>): string {
  return [...instances.keys()]
    .sort()
    .map((name) => `${name}=${pyRepr(new Map((instances.get(name) as BfclApi).state().map(([k, v]) => [k, sortedSets(v)])))}`)
    .join('\n');
}
