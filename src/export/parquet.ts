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
function numericList(values: readonly (readonly number[])[], field: Field, name: string): Data {
  const element = (field.type as List).children[0]!.type;
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Array.isArray(v)) throw new TypeError(`parquet column ${name}: row ${i} is not a list`);
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

function columnData<R>(rows: readonly R[], c: ColumnSpec<R>, field: Field): Data {
  const values = rows.map((r) => r[c.name] as unknown);
  if (c.type === 'list<int32>' || c.type === 'list<double>') return numericList(values as number[][], field, c.name);
  // One chunk per column and group (a record batch's columns are single Data).
  const builder = makeBuilder({ type: field.type, nullValues: [null, undefined] });
  for (const v of values) builder.append(v as never);
  return builder.finish().flush();
}

/** Rows → one Parquet file (as bytes) with the given columns, Snappy-compressed, plus key/value metadata. */
export function parquetBytes<R>(rows: readonly R[], columns: readonly ColumnSpec<R>[], metadata: Record<string, string>): Uint8Array {
  const fields = columns.map(fieldOf);
  const schema = new Schema(fields);
  const batches: RecordBatch[] = [];
  for (let start = 0; start < rows.length || batches.length === 0; start += ROW_GROUP_ROWS) {
    const group = rows.slice(start, start + ROW_GROUP_ROWS);
    const children = columns.map((c, j) => columnData(group, c, fields[j]!));
    batches.push(new RecordBatch(schema, makeData({ type: new Struct(fields), length: group.length, nullCount: 0, children })));
    if (rows.length === 0) break;
  }
  const pw = parquetWasm();
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
  const table = pw.Table.fromIPCStream(tableToIPC(new Table(schema, batches), 'stream'));
  return pw.writeParquet(table, props.build());
}
