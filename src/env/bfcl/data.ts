/**
 * BFCL v4 multi-turn data as shipped in data/bfcl: entries (JSON Lines despite the .json name),
 * ground truths (possible_answer/) and function docs (func_doc/). Entries are read with a JSON reader
 * that keeps Python's int/float distinction, because the APIs' results show it.
 */
import { plainOrGz, readLines } from '../../util/bounded-read.ts';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from './py/literal.ts';
import type { PyDict, PyValue } from './py/value.ts';

export const CATEGORIES = ['base', 'miss_func', 'miss_param', 'long_context'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Message {
  role: string;
  content: string;
}

export interface BfclEntry {
  id: string;
  category: Category;
  /** User turns; a miss_func turn that adds the held-back function has no message. */
  question: Message[][];
  initialConfig: PyDict;
  involvedClasses: string[];
  /** Turn index → names of the functions revealed at that turn (miss_func). */
  missedFunction: Map<number, string[]>;
  /** Function names left out of this entry's docs. */
  excludedFunction: string[];
  /** Ground truth: per turn, the calls in Python syntax. */
  groundTruth: string[][];
}

export interface FunctionDoc {
  name: string;
  description: string;
  parameters: { type: string; properties: Record<string, Record<string, unknown>>; required?: string[] };
  response?: unknown;
}

export const CLASS_DOC_FILES: Record<string, string> = {
  GorillaFileSystem: 'gorilla_file_system.json',
  MathAPI: 'math_api.json',
  MessageAPI: 'message_api.json',
  TwitterAPI: 'posting_api.json',
  TicketAPI: 'ticket_api.json',
  TradingBot: 'trading_bot.json',
  TravelAPI: 'travel_booking.json',
  VehicleControlAPI: 'vehicle_control.json',
};

export class BfclDataError extends Error {}

/** The non-empty lines of a data file (JSON Lines despite the .json names; or its .gz), through the bounded reader. */
const lines = (path: string): string[] => [...readLines(plainOrGz(path))].map((l) => l.text).filter((l) => l.trim() !== '');

function toJs(v: PyValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toJs);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJs(x)]));
  return v;
}

/** Load one category's entries joined with their ground truth. */
export function loadCategory(dataDir: string, category: Category): BfclEntry[] {
  const file = `BFCL_v4_multi_turn_${category}.json`;
  const truth = new Map<string, string[][]>();
  for (const line of lines(join(dataDir, 'possible_answer', file))) {
    const row = JSON.parse(line) as { id: string; ground_truth: string[][] };
    truth.set(row.id, row.ground_truth);
  }
  return lines(join(dataDir, file)).map((line, i) => {
    const row = parseJson(line) as PyDict;
    const id = row.get('id') as string;
    const groundTruth = truth.get(id);
    if (!groundTruth) throw new BfclDataError(`${file} line ${i + 1}: no ground truth for ${id} in possible_answer/${file}`);
    const missed = (toJs(row.get('missed_function') ?? new Map()) as Record<string, string[]>) ?? {};
    return {
      id,
      category,
      question: toJs(row.get('question') as PyValue) as Message[][],
      initialConfig: (row.get('initial_config') as PyDict) ?? new Map(),
      involvedClasses: toJs(row.get('involved_classes') as PyValue) as string[],
      missedFunction: new Map(Object.entries(missed).map(([k, v]) => [Number(k), v])),
      excludedFunction: (toJs(row.get('excluded_function') ?? []) as string[]) ?? [],
      groundTruth,
    };
  });
}

/** All four categories, by id. */
export function loadAll(dataDir: string): Map<string, BfclEntry> {
  const out = new Map<string, BfclEntry>();
  for (const c of CATEGORIES) for (const e of loadCategory(dataDir, c)) out.set(e.id, e);
  return out;
}

/** The function docs of one API class. */
export function loadClassDocs(dataDir: string, className: string): FunctionDoc[] {
  const file = CLASS_DOC_FILES[className];
  if (!file) throw new BfclDataError(`unknown BFCL class ${className}`);
  return lines(join(dataDir, 'func_doc', file)).map((l) => JSON.parse(l) as FunctionDoc);
}

/** The repository's data/bfcl folder. */
export const DEFAULT_BFCL_DIR = fileURLToPath(new URL('../../../data/bfcl/', import.meta.url));

/** Today's date from the clock, for the edges (CLI, environment construction) that pass it down. */
export function todayUtc(now: Date): { year: number; month: number; day: number } {
  return { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1, day: now.getUTCDate() };
}
