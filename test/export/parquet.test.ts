import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch, toTrlRow, TRL_COLUMNS, VERL_COLUMNS, writeBatch, type ColumnSpec } from '../../src/export/index.ts';
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
  assert.equal(writeBatch(batch, 'verl', file), 'parquet');
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
  writeBatch(batch, 'trl', file);
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
  assert.equal(writeBatch(batch, 'jsonl', file), 'jsonl');
  const lines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines, batch.rows);
});
