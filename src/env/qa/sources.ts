/**
 * Which QA datasets an environment or an evaluation uses. A source is a bundled dataset name
 * (hotpotqa, 2wiki, musique, bamboogle) or a JSONL file in the HotpotQA, 2Wiki, MuSiQue or
 * `{id, question, answer | answers}` shapes; a file's dataset name is its file name without extension.
 * The string shorthand `name*w` sets a mixing weight and `name:eval` marks it evaluation-only, so a
 * command line can say `--datasets hotpotqa,musique*0.5,bamboogle:eval`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DATASET_FILES, loadDataset, loadJsonlFile, type DatasetFormat, type QaExample } from './datasets.ts';

/** Bundled dataset names accepted in configs and on the command line (aliases included). */
export const QA_DATASET_NAMES: Record<string, DatasetFormat> = {
  hotpotqa: 'hotpotqa',
  '2wiki': '2wikimultihopqa',
  '2wikimultihopqa': '2wikimultihopqa',
  musique: 'musique',
  bamboogle: 'bamboogle',
};

export interface QaSourceSpec {
  /** A bundled name or a JSONL path. */
  source: string;
  /** Mixing weight of its training questions (1 = each once; 0.5 = half of them; 2 = each twice). */
  weight: number;
  /** Every question is held out (never trained on). */
  evalOnly: boolean;
}

export interface LoadedSource {
  /** The dataset's name in tables and JSON: the bundled name as given, or the file name. */
  name: string;
  spec: QaSourceSpec;
  examples: QaExample[];
}

/** Parses the string shorthand `source[*weight][:eval]`. */
export function parseSourceShorthand(text: string): QaSourceSpec {
  let s = text.trim();
  let evalOnly = false;
  if (s.endsWith(':eval')) {
    evalOnly = true;
    s = s.slice(0, -':eval'.length);
  }
  let weight = 1;
  const star = /\*([0-9]*\.?[0-9]+)$/.exec(s);
  if (star) {
    weight = Number(star[1]);
    s = s.slice(0, star.index);
  }
  return { source: s, weight, evalOnly };
}

/** Why a source cannot be used, or undefined when it can (a bundled name, or an existing file). */
export function checkSource(source: string): string | undefined {
  if (source in QA_DATASET_NAMES) return undefined;
  if (existsSync(source)) return undefined;
  return `"${source}" is neither a bundled dataset (${Object.keys(QA_DATASET_NAMES).join(', ')}) nor an existing JSONL file`;
}

/** The name a source goes by in tables: `2wiki` for the bundled 2Wiki, the file name for a file. */
export function sourceName(source: string): string {
  if (source in QA_DATASET_NAMES) return source === '2wikimultihopqa' ? '2wiki' : source;
  return path.basename(source).replace(/\.(jsonl|json)$/i, '');
}

/** Loads every source (a malformed line is a DatasetError naming file:line). Names must be distinct. */
export function loadSources(specs: readonly QaSourceSpec[], options: { dataDir?: string } = {}): LoadedSource[] {
  const out: LoadedSource[] = [];
  for (const spec of specs) {
    const name = sourceName(spec.source);
    if (out.some((o) => o.name === name)) throw new RangeError(`dataset "${name}" is listed twice; give each dataset once`);
    const format = QA_DATASET_NAMES[spec.source];
    const { examples } = format ? loadDataset(format, { dataDir: options.dataDir }) : loadJsonlFile(spec.source, { format: 'auto' });
    // The dataset label of every question is the source's name, so tables group by what the user listed.
    out.push({ name, spec, examples: examples.map((e) => ({ ...e, dataset: name })) });
  }
  return out;
}

export { DATASET_FILES };
