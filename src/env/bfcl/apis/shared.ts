/**
 * State that BFCL's Python APIs share between instances because it lives at module level: the
 * long-context constants (TravelAPI stores the extension credit cards and bookings by reference, so a
 * model's booking with such a card changes the ground truth's card too) and TwitterAPI's mutable default
 * arguments (`tags=[]`, `mentions=[]`). One SharedState spans one check (model and ground truth
 * instances of one entry); a fresh one per check keeps entries independent, where the official harness
 * would let one entry leak into the next.
 */
import { plainOrGz, readTextFile } from '../../../util/bounded-read.ts';
import { join } from 'node:path';
import { parseJson } from '../py/literal.ts';
import { deepCopy, type PyDict, type PyValue } from '../py/value.ts';

export class SharedState {
  readonly longContext: PyDict;
  readonly tweetDefaultTags: PyValue[] = [];
  readonly tweetDefaultMentions: PyValue[] = [];

  constructor(longContextData: PyDict) {
    this.longContext = deepCopy(longContextData) as PyDict;
  }

  constant(name: string): PyValue {
    const v = this.longContext.get(name);
    if (v === undefined) throw new Error(`long_context.json has no ${name}`);
    return v;
  }
}

const cache = new Map<string, PyDict>();

/** Read data/bfcl/long_context.json (the constants of BFCL's long_context.py) once per directory. */
export function loadLongContextData(dataDir: string): PyDict {
  const hit = cache.get(dataDir);
  if (hit) return hit;
  const parsed = parseJson(readTextFile(plainOrGz(join(dataDir, 'long_context.json'))));
  const data = replaceMarkers(parsed) as PyDict;
  cache.set(dataDir, data);
  return data;
}

/** `{"__python__": "Ellipsis"}` stands for Python's `...` (it ends WATCH_LIST_EXTENSION). */
function replaceMarkers(v: PyValue): PyValue {
  if (Array.isArray(v)) return v.map(replaceMarkers);
  if (v instanceof Map) {
    if (v.size === 1 && v.get('__python__') === 'Ellipsis') return ELLIPSIS;
    return new Map([...v].map(([k, x]) => [k, replaceMarkers(x)]));
  }
  return v;
}

export const ELLIPSIS = {
  pyType: 'ellipsis',
  repr: () => 'Ellipsis',
  equals: (other: PyValue) => other === ELLIPSIS,
};
