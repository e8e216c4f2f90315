/**
 * Loaders for the multi-hop QA datasets in data/ (HotpotQA distractor, 2WikiMultiHopQA,
 * MuSiQue-Ans, Bamboogle; see data/SOURCES.md) and for any JSONL a user brings in the same shapes.
 * Every example becomes a {@link QaExample}: question, gold answers (MuSiQue's aliases included), its own
 * titled paragraphs (empty for Bamboogle) and the titles of its supporting paragraphs.
 * A malformed line is a {@link DatasetError} naming file:line; with `skipBadLines` it is recorded in
 * `errors` and the rest of the file is kept.
 */
import { jsonLines, type JsonLine } from '../../util/json-lines.ts';
import { InputFileError, readJsonLinesFile } from '../../util/bounded-read.ts';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { z } from 'zod';
import type { Passage } from '../search/search-r1.ts';
import type { Prompt } from '../../tree/types.ts';

export type DatasetFormat = 'hotpotqa' | '2wikimultihopqa' | 'musique' | 'bamboogle';

export const DATASET_FILES: Record<DatasetFormat, string> = {
  hotpotqa: 'hotpotqa-dev-distractor.sample.jsonl.gz',
  '2wikimultihopqa': '2wikimultihopqa.sample.jsonl.gz',
  musique: 'musique-ans.sample.jsonl.gz',
  bamboogle: 'bamboogle.jsonl',
};

/** The repository's data/ folder (override with `dataDir`). */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../../data', import.meta.url));

export interface QaExample {
  id: string;
  question: string;
  answers: string[];
  dataset: string;
  /** The question's own paragraphs (HotpotQA/2Wiki: 10, MuSiQue: 20, Bamboogle: none). */
  paragraphs: Passage[];
  /** Titles of the gold supporting paragraphs. */
  supporting: string[];
  /** The dataset's question type (bridge, comparison, 2hop, …), when it has one. */
  type?: string;
}

/** A dataset file or line that cannot be used; a user error (one line: file:line and what is expected). */
export class DatasetError extends InputFileError {
  override name = 'DatasetError';
}

const hotpotLike = z.object({
  id: z.string().optional(),
  _id: z.string().optional(),
  question: z.string().min(1),
  answer: z.string(),
  type: z.string().optional(),
  context: z.array(z.tuple([z.string(), z.array(z.string())])),
  supporting_facts: z.array(z.tuple([z.string(), z.number().int()])).default([]),
});
const musique = z.object({
  id: z.string(),
  question: z.string().min(1),
  answer: z.string(),
  answer_aliases: z.array(z.string()).default([]),
  paragraphs: z.array(z.object({ idx: z.number().int(), title: z.string(), paragraph_text: z.string(), is_supporting: z.boolean() })),
});
/** Bamboogle and the plain user shape: `{id?, question, answer}` or `{id?, question, answers: [...]}`. */
const bamboogle = z
  .object({
    id: z.union([z.string(), z.number()]).optional(),
    question: z.string().min(1),
    answer: z.string().optional(),
    answers: z.array(z.string()).min(1).optional(),
  })
  .refine((r) => r.answer !== undefined || r.answers !== undefined, {
    message: 'needs "answer" (a string) or "answers" (a list of strings)',
    path: ['answer'],
  });

/** Joins sentences the way the text reads: HotpotQA's carry their own leading spaces, 2Wiki's do not. */
function joinSentences(sentences: readonly string[]): string {
  let out = '';
  for (const s of sentences) out += out.length > 0 && !/\s$/.test(out) && !/^\s/.test(s) ? ` ${s}` : s;
  return out.trim();
}

function convert(format: DatasetFormat, raw: unknown, fallbackId: string): QaExample {
  switch (format) {
    case 'hotpotqa':
    case '2wikimultihopqa': {
      const r = hotpotLike.parse(raw);
      const id = r.id ?? r._id ?? fallbackId;
      return {
        id,
        question: r.question,
        answers: [r.answer],
        dataset: format,
        paragraphs: r.context.map(([title, sents], i) => ({ id: `${id}#${i}`, title, text: joinSentences(sents) })),
        supporting: [...new Set(r.supporting_facts.map(([t]) => t))],
        ...(r.type ? { type: r.type } : {}),
      };
    }
    case 'musique': {
      const r = musique.parse(raw);
      return {
        id: r.id,
        question: r.question,
        answers: [r.answer, ...r.answer_aliases],
        dataset: format,
        paragraphs: r.paragraphs.map((p) => ({ id: `${r.id}#${p.idx}`, title: p.title, text: p.paragraph_text })),
        supporting: r.paragraphs.filter((p) => p.is_supporting).map((p) => p.title),
        type: r.id.split('__')[0],
      };
    }
    case 'bamboogle': {
      const r = bamboogle.parse(raw);
      const answers = [...(r.answer !== undefined ? [r.answer] : []), ...(r.answers ?? [])];
      return { id: r.id !== undefined ? String(r.id) : fallbackId, question: r.question, answers, dataset: format, paragraphs: [], supporting: [] };
    }
  }
}

/** Guesses the format of a row: `paragraphs` → MuSiQue, `context` → HotpotQA-like, else question/answer only. */
export function detectFormat(raw: unknown): DatasetFormat {
  if (raw && typeof raw === 'object') {
    if ('paragraphs' in raw) return 'musique';
    if ('context' in raw) return 'hotpotqa';
  }
  return 'bamboogle';
}

export interface LoadOptions {
  /** Row layout; 'auto' detects it per line. Default: from the dataset name, or 'auto' for files. */
  format?: DatasetFormat | 'auto';
  /** Keep going past malformed lines, recording them in `errors`. Default false (stop at the first). */
  skipBadLines?: boolean;
  /** Keep only the first n examples. */
  limit?: number;
}

export interface LoadResult {
  examples: QaExample[];
  errors: DatasetError[];
}

/** Parses JSONL text; `file` is only used in error messages. */
export function parseDatasetJsonl(text: string, file: string, options: LoadOptions = {}): LoadResult {
  return parseDatasetLines(jsonLines(text), file, options);
}

/** Converts parsed JSON lines (from text or from a file) into examples. */
function parseDatasetLines(lines: Iterable<JsonLine>, file: string, options: LoadOptions): LoadResult {
  const examples: QaExample[] = [];
  const errors: DatasetError[] = [];
  const seen = new Map<string, number>();
  for (const { line, value, error } of lines) {
    if (options.limit !== undefined && examples.length >= options.limit) break;
    try {
      if (error !== undefined) throw new Error(`not valid JSON (${error}); each line must be one JSON object`);
      const format = !options.format || options.format === 'auto' ? detectFormat(value) : options.format;
      const example = convert(format, value, `${path.basename(file)}:${line}`);
      // Results are kept per id: a second question with the same id would silently replace the first.
      const first = seen.get(example.id);
      if (first !== undefined) throw new Error(duplicateId(example.id, first));
      seen.set(example.id, line);
      examples.push(example);
    } catch (e) {
      const message = e instanceof z.ZodError ? e.issues.map((x) => `${x.path.join('.') || 'row'}: ${x.message}`).join('; ') : (e as Error).message;
      const err = new DatasetError(file, line, message);
      if (!options.skipBadLines) throw err;
      errors.push(err);
    }
  }
  if (examples.length === 0 && errors.length === 0) throw new DatasetError(file, 0, NO_ROWS);
  return { examples, errors };
}

/** Why a dataset file without a question is refused (it would evaluate to an empty table). */
export const NO_ROWS = 'has no questions (no non-empty lines); give a JSONL file with one question per line';

/** The refusal of a repeated id, naming the line that used it first. */
export function duplicateId(id: string, firstLine: number): string {
  return `id "${id}" is already used on line ${firstLine}; give each question its own id`;
}

export function loadJsonlFile(file: string, options: LoadOptions = {}): LoadResult {
  // Read through the bounded reader: a device, FIFO or folder is refused, and so is an overlong line.
  return parseDatasetLines(readJsonLinesFile(file), file, options);
}

/** One of the four bundled datasets from `dataDir` (default: the repository's data/). */
export function loadDataset(name: DatasetFormat, options: LoadOptions & { dataDir?: string } = {}): LoadResult {
  const file = path.join(options.dataDir ?? DEFAULT_DATA_DIR, DATASET_FILES[name]);
  return loadJsonlFile(file, { format: name, ...options });
}

/** The prompt for an example; `meta.paragraphs` feeds the per-question corpus. */
export function exampleToPrompt(e: QaExample): Prompt {
  return {
    id: e.id,
    question: e.question,
    answers: e.answers,
    meta: { dataset: e.dataset, paragraphs: e.paragraphs, supporting: e.supporting, ...(e.type ? { type: e.type } : {}) },
  };
}
