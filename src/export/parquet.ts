import { parquetWriteBuffer } from 'hyparquet-writer';

/** The writer's own schema element type (its bundled hyparquet version, not the reader's). */
type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]['schema']>[number];

/** Column types used by export, each mapped to one Parquet schema (lists use the standard 3-level LIST). */
export type ColumnType = 'string' | 'int32' | 'double' | 'bool' | 'list<int32>' | 'list<double>' | 'list<string>';

export interface ColumnSpec<R> {
  name: keyof R & string;
  type: ColumnType;
  /** Nullable scalar (written OPTIONAL); lists and other scalars are REQUIRED. */
  nullable?: boolean;
  /**
   * false: write plain values, never a dictionary. For columns of mostly distinct values (token ids of a
   * 150k vocabulary, log-probabilities) the writer's dictionary trial costs time and saves nothing.
   */
  dictionary?: false;
  doc: string;
}

const PRIMITIVE: Record<string, Pick<SchemaElement, 'type' | 'converted_type'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  int32: { type: 'INT32' },
  double: { type: 'DOUBLE' },
  bool: { type: 'BOOLEAN' },
};

export function schemaOf<R>(columns: readonly ColumnSpec<R>[]): SchemaElement[] {
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) {
    const list = /^list<(.+)>$/.exec(c.type);
    if (list) {
      schema.push({ name: c.name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 });
      schema.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
      schema.push({ name: 'element', repetition_type: 'REQUIRED', ...PRIMITIVE[list[1]] });
    } else {
      schema.push({ name: c.name, repetition_type: c.nullable ? 'OPTIONAL' : 'REQUIRED', ...PRIMITIVE[c.type] });
    }
  }
  return schema;
}

/** The writer's column sources for `rows`. */
function columnDataOf<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[]) {
  return columns.map((c) => ({
    name: c.name,
    data: rows.map((r) => r[c.name] as unknown) as never,
    // Min/max statistics of token lists help no reader (nobody filters on a token id) and cost ~20% of the write.
    statistics: !c.type.startsWith('list'),
    ...(c.dictionary === false ? { encoding: 'PLAIN' as const } : {}),
  }));
}

/**
 * Rows per row group. The writer encodes a group's columns (repetition and definition levels, pages)
 * whole before the next, so this bounds the memory of encoding to one group's, whatever the batch size;
 * 256 rows of multi-turn rollouts are a few million tokens, far above Parquet's useful minimum.
 */
export const ROW_GROUP_ROWS = 256;

/** Rows → one Parquet file (as bytes) with the given columns, Snappy-compressed, plus key/value metadata. */
export function parquetBytes<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[], metadata: Record<string, string>): Uint8Array {
  const buffer = parquetWriteBuffer({
    columnData: columnDataOf(rows, columns),
    schema: schemaOf(columns),
    rowGroupSize: ROW_GROUP_ROWS,
    kvMetadata: Object.entries(metadata).map(([key, value]) => ({ key, value })),
    createdBy: 'trace-rl export',
  });
  return new Uint8Array(buffer);
}
