import { writeFileAtomicFrom } from '../store/atomic-write.ts';
import { TRL_COLUMNS, VERL_COLUMNS } from './columns.ts';
import type { ExportBatch } from './rows.ts';
import { trieRecords } from './trie.ts';
import { toTrlRow } from './trl.ts';

/**
 * verl: verl-shaped rows (Parquet, or JSONL when the file ends in .jsonl); trl: TRL-shaped rows (same
 * rule); jsonl: verl-shaped rows as JSONL; trl-jsonl: TRL-shaped rows as JSONL (for the rollout
 * service's batch files, which are Parquet for verl/trl); trie: the de-duplicated prefix trie as JSONL.
 */
export const EXPORT_FORMATS = ['verl', 'trl', 'jsonl', 'trl-jsonl', 'trie'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(s: string): s is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(s);
}

/** Parquet or JSONL for a format and a file name. */
export function containerOf(format: ExportFormat, file: string): 'parquet' | 'jsonl' {
  if (format === 'jsonl' || format === 'trl-jsonl' || format === 'trie') return 'jsonl';
  return file.endsWith('.jsonl') ? 'jsonl' : 'parquet';
}

/** The batch as file bytes. */
export async function serializeBatch(batch: ExportBatch, format: ExportFormat, container: 'parquet' | 'jsonl'): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of batchChunks(batch, format, container)) chunks.push(c);
  return Buffer.concat(chunks);
}

/** The batch's file a piece at a time: Parquet row groups as they are written, JSONL whole. */
async function* batchChunks(batch: ExportBatch, format: ExportFormat, container: 'parquet' | 'jsonl'): AsyncGenerator<Uint8Array> {
  const metadata = Object.fromEntries(Object.entries({ ...batch.meta, producer: 'trace-rl', row_form: format }).map(([k, v]) => [`trace_rl.${k}`, String(v)]));
  if (format === 'trie') return yield jsonl(trieRecords(batch));
  const rows = format === 'trl' || format === 'trl-jsonl' ? batch.rows.map(toTrlRow) : batch.rows;
  if (container === 'jsonl') return yield jsonl(rows);
  // Apache Arrow and parquet-wasm load here, for a Parquet file only (~0.1 CPU-s at every start otherwise).
  const { parquetChunks } = await import('./parquet.ts');
  yield* format === 'trl' ? parquetChunks(rows as ReturnType<typeof toTrlRow>[], TRL_COLUMNS, metadata) : parquetChunks(batch.rows, VERL_COLUMNS, metadata);
}

function jsonl(records: readonly unknown[]): Uint8Array {
  return new TextEncoder().encode(records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
}

/**
 * Writes the batch to `file` atomically (a temporary file renamed into place), so a trainer watching
 * the folder never reads half a file; Parquet goes out a row group at a time. Returns the container used.
 */
export async function writeBatch(batch: ExportBatch, format: ExportFormat, file: string): Promise<'parquet' | 'jsonl'> {
  const container = containerOf(format, file);
  await writeFileAtomicFrom(file, batchChunks(batch, format, container));
  return container;
}
