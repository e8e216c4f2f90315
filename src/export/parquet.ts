import { createRequire } from 'node:module';
import {
  Bool,
  Field,
  Float64,
  Int32,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  makeBuilder,
  tableToIPC,
  type Data,
  type DataType,
} from 'apache-arrow';

/**
 * Parquet files through Apache Arrow and parquet-wasm (the Rust arrow-rs writer compiled to
 * WebAssembly). Token lists are the bulk of a batch (millions of ids and log-probabilities), and a
 * JavaScript writer spent most of its time shredding each list value by value into Parquet's levels:
 * here a list column becomes one typed array of values and one of offsets, and the levels are written
 * in compiled code (bench/export/parquet-scale.ts measured the two side by side).
 */

/** Column types used by export, each mapped to one Parquet schema (lists use the standard 3-level LIST). */
export type ColumnType = 'string' | 'int32' | 'double' | 'bool' | 'list<int32>' | 'list<double>' | 'list<string>';

export interface ColumnSpec<R> {
  name: keyof R & string;
  type: ColumnType;
  /** Nullable scalar (written OPTIONAL); lists and other scalars are REQUIRED. */
  nullable?: boolean;
  /**
   * false: write plain values, never a dictionary. For columns of mostly distinct values (token ids of a
   * 150k vocabulary, log-probabilities) a dictionary costs time and saves nothing.
   */
  dictionary?: false;
  doc: string;
}

/**
 * Rows per row group. Each group is built as its own Arrow record batch, so the typed arrays of one
 * group are what a batch holds besides its rows; 256 rows of multi-turn rollouts are a few million
 * tokens, far above Parquet's useful minimum.
 */
export const ROW_GROUP_ROWS = 256;

type ParquetWasm = typeof import('parquet-wasm/node');
let wasm: ParquetWasm | undefined;
/** parquet-wasm's Node build compiles its WebAssembly when first required: only a command that writes Parquet pays for it. */
function parquetWasm(): ParquetWasm {
  return (wasm ??= createRequire(import.meta.url)('parquet-wasm/node') as ParquetWasm);
}

const SCALAR: Record<string, () => DataType> = { string: () => new Utf8(), int32: () => new Int32(), double: () => new Float64(), bool: () => new Bool() };

/** The Arrow field of a column: a list's elements are REQUIRED and named `element` (the standard 3-level LIST). */
function fieldOf<R>(c: ColumnSpec<R>): Field {
  const list = /^list<(.+)>$/.exec(c.type);
  if (list) return new Field(c.name, new List(new Field('element', SCALAR[list[1]!]!(), false)), false);
  return new Field(c.name, SCALAR[c.type]!(), c.nullable === true);
}

/** A numeric list column of `rows` as one typed array of values and one of offsets. */
function numericList(values: readonly (readonly number[])[], field: Field, name: string, first: number): Data {
  const element = (field.type as List).children[0]!.type;
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Array.isArray(v)) throw new TypeError(`parquet column ${name}: row ${first + i} is not a list`);
    total += v.length;
    offsets[i + 1] = total;
  }
  const flat = element instanceof Int32 ? new Int32Array(total) : new Float64Array(total);
  for (let i = 0, o = 0; i < values.length; i++) {
    const v = values[i]!;
    for (let k = 0; k < v.length; k++) flat[o + k] = v[k]!;
    o += v.length;
  }
  const child = makeData({ type: element, length: total, nullCount: 0, data: flat } as never);
  return makeData({ type: field.type as List, length: values.length, nullCount: 0, valueOffsets: offsets, child });
}

/** `first`: the index of `rows[0]` in the whole batch (errors name the batch's row). */
function columnData<R>(rows: readonly R[], c: ColumnSpec<R>, field: Field, first: number): Data {
  const values = rows.map((r) => r[c.name] as unknown);
  if (c.type === 'list<int32>' || c.type === 'list<double>') return numericList(values as number[][], field, c.name, first);
  // One chunk per column and group (a record batch's columns are single Data).
  const builder = makeBuilder({ type: field.type, nullValues: [null, undefined] });
  for (const v of values) builder.append(v as never);
  return builder.finish().flush();
}

/**
 * Rows → a Parquet file's bytes, one row group at a time: each group of ROW_GROUP_ROWS rows becomes an
 * Arrow record batch, is handed to parquet-wasm's streaming writer, and is written out before the next
 * group is built, so the writer holds one group besides the rows (the whole-table writer held about
 * 3.5× the rows). Between groups the event loop runs. Snappy-compressed, with key/value metadata.
 */
export async function* parquetChunks<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[], metadata: Record<string, string>): AsyncGenerator<Uint8Array> {
  const fields = columns.map(fieldOf);
  const schema = new Schema(fields);
  const pw = parquetWasm();
  let start = 0;
  // parquet-wasm ends its output quietly when its source fails (a file cut after the groups before):
  // the failure is kept here and thrown once the output ends, so the file is never completed.
  let failure: { error: unknown } | undefined;
  const groups = new ReadableStream({
    // Pulled by the writer when it wants the next group: at most one group is built ahead.
    async pull(controller) {
      await new Promise((resolve) => setImmediate(resolve)); // timers and I/O run between groups
      if (start >= rows.length && start > 0) return controller.close();
      const first = start;
      const group = rows.slice(start, start + ROW_GROUP_ROWS);
      start += ROW_GROUP_ROWS;
      try {
        const children = columns.map((c, j) => columnData(group, c, fields[j]!, first));
        const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length: group.length, nullCount: 0, children }));
        const table = pw.Table.fromIPCStream(tableToIPC(new Table(schema, [batch]), 'stream'));
        try {
          for (const b of table.recordBatches()) controller.enqueue(b);
        } finally {
          table.free();
        }
      } catch (error) {
        failure = { error };
        controller.error(error);
      }
    },
  });
  const bytes = (await pw.transformParquetStream(groups, writerProperties(pw, columns, metadata))) as ReadableStream<Uint8Array>;
  for await (const chunk of bytes as unknown as AsyncIterable<Uint8Array>) {
    if (failure) break;
    yield chunk;
  }
  if (failure) throw failure.error;
}

function writerProperties<R>(pw: ParquetWasm, columns: readonly ColumnSpec<R>[], metadata: Record<string, string>) {
  let props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setCreatedBy('trace-rl export')
    .setKeyValueMetadata(new Map(Object.entries(metadata)));
  for (const c of columns) {
    const leaf = c.type.startsWith('list') ? `${c.name}.list.element` : c.name;
    if (c.dictionary === false) props = props.setColumnDictionaryEnabled(leaf, false);
    // Min/max statistics of token lists help no reader (nobody filters on a token id).
    if (c.type.startsWith('list')) props = props.setColumnStatisticsEnabled(leaf, pw.EnabledStatistics.None);
  }
  return props.build();
}
