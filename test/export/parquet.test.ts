import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch, parquetChunks, toTrlRow, TRL_COLUMNS, VERL_COLUMNS, writeBatch, type ColumnSpec } from '../../src/export/index.ts';
import { ROW_GROUP_ROWS } from '../../src/export/parquet.ts';
import { writeFileAtomicFrom } from '../../src/store/index.ts';
import { smallRun } from './fixtures.ts';

const DUCKDB_TYPE: Record<string, string> = {
  string: 'VARCHAR',
  int32: 'INTEGER',
  double: 'DOUBLE',
  bool: 'BOOLEAN',
  'list<int32>': 'INTEGER[]',
  'list<double>': 'DOUBLE[]',
  'list<string>': 'VARCHAR[]',
};

/** Reads a Parquet file with DuckDB (an independent C++ reader): column types and every row as JS values. */
async function readWithDuckDb(file: string) {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const described = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const types = Object.fromEntries(described.getRowObjectsJS().map((r) => [String(r.column_name), String(r.column_type)]));
  const rows = (await c.runAndReadAll(`SELECT * FROM read_parquet('${file}')`)).getRowObjectsJS();
  const meta = (await c.runAndReadAll(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${file}')`)).getRowObjectsJS();
  c.closeSync();
  db.closeSync();
  return { types, rows, meta: Object.fromEntries(meta.map((m) => [String(m.k), String(m.v)])) };
}

function checkColumns<R>(types: Record<string, string>, columns: readonly ColumnSpec<R>[]) {
  assert.deepEqual(
    Object.keys(types),
    columns.map((c) => c.name),
    'columns in the documented order',
  );
  for (const c of columns) assert.equal(types[c.name], DUCKDB_TYPE[c.type], `column ${c.name} is ${c.type}`);
}

test('verl Parquet read back with DuckDB equals what was written, column by column', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('trace') });
  const file = join(mkdtempSync(join(tmpdir(), 'trace-pq-')), 'step-0.parquet');
  assert.equal(await writeBatch(batch, 'verl', file), 'parquet');
  const back = await readWithDuckDb(file);
  checkColumns(back.types, VERL_COLUMNS);
  assert.equal(back.rows.length, batch.rows.length);
  back.rows.forEach((r, i) => assert.deepEqual(r, { ...batch.rows[i] }, `row ${i} (${batch.rows[i].leaf_id})`));
  assert.equal(back.meta['trace_rl.tokenizer'], 'bytes+3');
  assert.equal(back.meta['trace_rl.estimator'], 'trace');
});

test('TRL Parquet read back with DuckDB equals the TRL rows', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 2, estimator: createEstimator('treepo') });
  const file = join(mkdtempSync(join(tmpdir(), 'trace-pq-')), 'trl.parquet');
  await writeBatch(batch, 'trl', file);
  const back = await readWithDuckDb(file);
  checkColumns(back.types, TRL_COLUMNS);
  const expected = batch.rows.map(toTrlRow);
  back.rows.forEach((r, i) => assert.deepEqual(r, { ...expected[i] }, `row ${i}`));
  for (const r of expected) assert.deepEqual(r.tool_mask, batch.rows.find((x) => x.leaf_id === r.leaf_id)!.response_mask);
});

test('JSONL rows parse back to the same rows', async () => {
  const run = await smallRun();
  const batch = buildBatch(run.trees, { step: 0, estimator: createEstimator('grpo') });
  const file = join(mkdtempSync(join(tmpdir(), 'trace-pq-')), 'rows.jsonl');
  assert.equal(await writeBatch(batch, 'jsonl', file), 'jsonl');
  const lines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines, batch.rows);
});

type Wide = { id: string; ids: number[]; lp: number[]; note: string | null };
const WIDE: ColumnSpec<Wide>[] = [
  { name: 'id', type: 'string', doc: 'row id' },
  { name: 'ids', type: 'list<int32>', dictionary: false, doc: 'token ids' },
  { name: 'lp', type: 'list<double>', dictionary: false, doc: 'log-probabilities' },
  { name: 'note', type: 'string', nullable: true, doc: 'optional text' },
];
const wideRows = (n: number): Wide[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `r${i}`,
    ids: Array.from({ length: i % 7 }, (_, k) => i * 10 + k),
    lp: Array.from({ length: i % 5 }, (_, k) => -(i + k) / 8),
    note: i % 3 ? `n${i}` : null,
  }));

test('a file of several row groups is streamed a group at a time and reads back whole', async () => {
  // Rows long enough that each group is written out on its own.
  const rows = wideRows(2 * ROW_GROUP_ROWS + 37).map((r, i) => ({ ...r, ids: Array.from({ length: 1000 }, (_, k) => (i * 7 + k) % 5003) }));
  const file = join(mkdtempSync(join(tmpdir(), 'trace-pq-')), 'wide.parquet');
  let chunks = 0;
  async function* counted() {
    for await (const c of parquetChunks(rows, WIDE, { k: 'v' })) {
      chunks++;
      yield c;
    }
  }
  await writeFileAtomicFrom(file, counted());
  assert.ok(chunks >= 3, `the writer handed out ${chunks} pieces, not the whole file at once`);
  const back = await readWithDuckDb(file);
  assert.deepEqual(
    back.rows,
    rows.map((r) => ({ ...r })),
  );
  assert.equal(back.meta.k, 'v');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const groups = (
    await c.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${file}') ORDER BY row_group_id`)
  ).getRowObjectsJS();
  c.closeSync();
  db.closeSync();
  assert.deepEqual(
    groups.map((g) => Number(g.row_group_num_rows)),
    [ROW_GROUP_ROWS, ROW_GROUP_ROWS, 37],
  );
});

test('an empty batch is a valid Parquet file with no rows', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'trace-pq-')), 'empty.parquet');
  await writeFileAtomicFrom(file, parquetChunks([], WIDE, {}));
  const back = await readWithDuckDb(file);
  assert.deepEqual(back.rows, []);
  assert.deepEqual(Object.keys(back.types), ['id', 'ids', 'lp', 'note']);
});

test('a row that fails half-way through the stream leaves no file and no temporary file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-pq-'));
  const rows = wideRows(ROW_GROUP_ROWS + 5);
  (rows[ROW_GROUP_ROWS + 2] as unknown as { ids: unknown }).ids = 'not a list';
  await assert.rejects(writeFileAtomicFrom(join(dir, 'bad.parquet'), parquetChunks(rows, WIDE, {})), /parquet column ids: row 258 is not a list/);
  assert.equal(existsSync(join(dir, 'bad.parquet')), false);
  assert.deepEqual(readdirSync(dir), []);
});
