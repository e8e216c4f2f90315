/**
 * Math datasets in data/math (GSM8K test/train, MATH 500, AIME 2024/2025; see data/SOURCES.md) and any
 * JSONL in the same shape: one object per line with the problem in `question` or `problem`, and the
 * gold answer in `answer` (a string or a number; a GSM8K-style worked solution ending in
 * `#### <answer>` gives the text after the last `####`). `id` is optional (default `<dataset>-<line>`);
 * `level` and `subject` are kept in `meta`. A malformed line is a {@link DatasetError} naming file:line.
 */
import path from 'node:path';
import { z } from 'zod';
import { InputFileError, readJsonLinesFile } from '../../util/bounded-read.ts';
import { DatasetError, DEFAULT_DATA_DIR, duplicateId, NO_ROWS } from '../qa/datasets.ts';
import type { Prompt } from '../../tree/types.ts';

export const MATH_DATASETS = {
  gsm8k: 'gsm8k-test.jsonl.gz',
  'gsm8k-train': 'gsm8k-train.jsonl.gz',
  math500: 'math500.jsonl.gz',
  aime24: 'aime24.jsonl.gz',
  aime25: 'aime25.jsonl',
} as const;
export type MathDatasetName = keyof typeof MATH_DATASETS;

const row = z
  .object({
    id: z.union([z.string(), z.number()]).optional(),
    question: z.string().min(1).optional(),
    problem: z.string().min(1).optional(),
    answer: z.union([z.string().min(1), z.number()]),
    level: z.union([z.string(), z.number()]).optional(),
    subject: z.string().optional(),
  })
  .refine((r) => r.question !== undefined || r.problem !== undefined, { message: 'needs "question" or "problem" (the problem text)' });

/** The gold answer of a row: GSM8K's text after the last "####", otherwise the answer as given. */
export function goldAnswer(answer: string | number): string {
  const s = String(answer);
  const at = s.lastIndexOf('####');
  return (at >= 0 ? s.slice(at + 4) : s).trim();
}

/** Loads a bundled dataset by name, or any JSONL file by path (the dataset name is the file's base name). */
export function loadMathDataset(nameOrFile: string, options: { dataDir?: string; limit?: number } = {}): Prompt[] {
  const bundled = (MATH_DATASETS as Record<string, string>)[nameOrFile];
  const file = bundled ? path.join(options.dataDir ?? DEFAULT_DATA_DIR, 'math', bundled) : nameOrFile;
  const dataset = bundled ? nameOrFile : path.basename(file).replace(/\.jsonl?$/, '');
  try {
    return parseRows(readJsonLinesFile(file), file, dataset, options.limit);
  } catch (e) {
    // A path that is not a readable regular file may be a misspelt bundled name: list them.
    if (e instanceof InputFileError && !(e instanceof DatasetError) && e.line === 0 && !bundled)
      throw new DatasetError(file, 0, `${e.reason} (or name a bundled dataset: ${Object.keys(MATH_DATASETS).join(', ')})`);
    throw e;
  }
}

function parseRows(lines: ReturnType<typeof readJsonLinesFile>, file: string, dataset: string, limit: number | undefined): Prompt[] {
  const out: Prompt[] = [];
  const seen = new Map<string, number>();
  for (const { line, value, error } of lines) {
    if (limit !== undefined && out.length >= limit) break;
    if (error !== undefined) throw new DatasetError(file, line, `not valid JSON (${error})`);
    const parsed = row.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DatasetError(
        file,
        line,
        `${issue.path.join('.') || 'line'}: ${issue.message}; expected {"question" | "problem": string, "answer": string | number}`,
      );
    }
    const r = parsed.data;
    if (r.id !== undefined) {
      const first = seen.get(String(r.id));
      if (first !== undefined) throw new DatasetError(file, line, duplicateId(String(r.id), first));
      seen.set(String(r.id), line);
    }
    const meta: Record<string, unknown> = { dataset };
    if (r.level !== undefined) meta.level = String(r.level);
    if (r.subject !== undefined) meta.subject = r.subject;
    out.push({ id: `${dataset}-${r.id ?? line}`, question: (r.question ?? r.problem)!, answers: [goldAnswer(r.answer)], meta });
  }
  if (out.length === 0) throw new DatasetError(file, 0, NO_ROWS);
  return out;
}
