/**
 * Parquet batch files at fleet scale: synthetic verl rows (N leaves × T response tokens, 60 % of them
 * model tokens, VERL_COLUMNS) written three ways in the same run, each in its own child process (so
 * each has its own peak RSS), alternating per repetition:
 *  - now:       trace-rl's writer (src/export/parquet.ts: Apache Arrow record batches of ROW_GROUP_ROWS,
 *               streamed through parquet-wasm, the Rust arrow-rs writer compiled to WebAssembly, into
 *               the file a row group at a time, as `writeBatch` does);
 *  - hyparquet:  the JavaScript writer trace-rl used before (hyparquet-writer with the same row groups,
 *               no dictionary on token ids and log-probabilities, no statistics on lists);
 *  - duckdb:     DuckDB's COPY … TO parquet of the same rows (loaded from JSONL first, load not timed).
 * Reports wall seconds (min / median / max), the child's peak RSS (VmHWM), file size, and ratios.
 * Run: npx tsx bench/export/parquet-scale.ts [--rows 4096] [--tokens 2500] [--reps 3]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { VERL_COLUMNS } from '../../src/export/columns.ts';
import { parquetChunks, ROW_GROUP_ROWS } from '../../src/export/parquet.ts';
import { writeFileAtomicFrom } from '../../src/store/atomic-write.ts';
import type { LeafRow } from '../../src/export/rows.ts';
import { createRng } from '../../src/util/rng.ts';

const arg = (name: string, d: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : d);
const N = Number(arg('--rows', '4096'));
const T = Number(arg('--tokens', '2500'));
const reps = Number(arg('--reps', '3'));
const variant = arg('--variant', '');

function rows(): LeafRow[] {
  const rng = createRng(1);
  return Array.from({ length: N }, (_, i) => {
    const ids = Array.from({ length: T }, () => Math.floor(rng.next() * 151_000));
    const mask = ids.map((_, t) => (t % 100 < 60 ? 1 : 0));
    const q = `q${i >> 3}`;
    return {
      step: 0,
      prompt_id: q,
      tree_id: `0:${q}`,
      leaf_id: `${q}/${i & 7}/0`,
      node_path: [`${q}/${i & 7}`, `${q}/${i & 7}/0`],
      branch_depth: 1,
      origin: 'bare',
      num_turns: 5,
      prompt_ids: ids.slice(0, 500),
      response_ids: ids,
      response_mask: mask,
      response_logprobs: mask.map((m) => (m ? -rng.next() : 0)),
      logprobs_known: true,
      token_exact: true,
      advantages: mask.map((m) => (m ? 0.5 : 0)),
      advantage: 0.5,
      turn_advantages: [0.5, 0.5, 0.5, 0.5, 0.5],
      turn_starts: [0, 500, 1000, 1500, 2000],
      reward: 1,
      score: 1,
      anchor_ids: [q],
      anchor_predicted: [0.5],
      prompt_text: 'p'.repeat(2000),
      response_text: 'r'.repeat(10_000),
    } as unknown as LeafRow;
  });
}

/** The schema the hyparquet-writer version wrote (standard 3-level LISTs, REQUIRED elements). */
function hyparquetSchema(columns: typeof VERL_COLUMNS) {
  const primitive: Record<string, object> = {
    string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
    int32: { type: 'INT32' },
    double: { type: 'DOUBLE' },
    bool: { type: 'BOOLEAN' },
  };
  const schema: object[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) {
    const list = /^list<(.+)>$/.exec(c.type);
    if (list) {
      schema.push({ name: c.name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 });
      schema.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
      schema.push({ name: 'element', repetition_type: 'REQUIRED', ...primitive[list[1]!] });
    } else schema.push({ name: c.name, repetition_type: c.nullable ? 'OPTIONAL' : 'REQUIRED', ...primitive[c.type] });
  }
  return schema as never;
}

const peakRssMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

if (variant) {
  // One measurement in this child: build the rows, write them, print seconds, peak RSS and size.
  const out = arg('--out', '');
  const data = rows();
  const before = peakRssMb();
  let seconds: number;
  if (variant === 'duckdb') {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const jsonl = `${out}.jsonl`;
    writeFileSync(jsonl, data.map((x) => JSON.stringify(x)).join('\n'));
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    await db.run(`CREATE TABLE t AS SELECT * FROM read_json('${jsonl}', format='newline_delimited', maximum_object_size=100000000)`);
    const a = performance.now();
    await db.run(`COPY t TO '${out}' (FORMAT parquet, COMPRESSION snappy)`);
    seconds = (performance.now() - a) / 1000;
    rmSync(jsonl);
  } else {
    const a = performance.now();
    if (variant === 'now') await writeFileAtomicFrom(out, parquetChunks(data, VERL_COLUMNS, { k: 'v' }));
    else
      writeFileSync(
        out,
        new Uint8Array(
          parquetWriteBuffer({
            columnData: VERL_COLUMNS.map((c) => ({
              name: c.name,
              data: data.map((r) => r[c.name] as unknown) as never,
              statistics: !c.type.startsWith('list'),
              ...(c.dictionary === false ? { encoding: 'PLAIN' as const } : {}),
            })),
            schema: hyparquetSchema(VERL_COLUMNS),
            rowGroupSize: ROW_GROUP_ROWS,
            kvMetadata: [{ key: 'k', value: 'v' }],
          }),
        ),
      );
    seconds = (performance.now() - a) / 1000;
  }
  console.log(JSON.stringify({ seconds, peakMb: peakRssMb(), rowsMb: before, sizeMb: statSync(out).size / 1e6 }));
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'parquet-scale-'));
const me = fileURLToPath(import.meta.url);
const results: Record<string, Array<{ seconds: number; peakMb: number; rowsMb: number; sizeMb: number }>> = { now: [], hyparquet: [], duckdb: [] };
for (let r = 0; r < reps; r++) {
  for (const v of Object.keys(results)) {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', me, '--variant', v, '--rows', String(N), '--tokens', String(T), '--out', join(dir, `${v}.parquet`)],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      },
    );
    if (run.status !== 0) throw new Error(`${v}: ${run.stderr}`);
    results[v]!.push(JSON.parse(run.stdout.trim().split('\n').at(-1)!));
    process.stderr.write(`rep ${r + 1} ${v}: ${results[v]!.at(-1)!.seconds.toFixed(1)} s\n`);
  }
}
rmSync(dir, { recursive: true, force: true });
const s = (xs: number[]) => [...xs].sort((a, b) => a - b);
const mmm = (xs: number[], d = 1) => {
  const o = s(xs);
  return `${o[0]!.toFixed(d)} / ${o[Math.floor(o.length / 2)]!.toFixed(d)} / ${o.at(-1)!.toFixed(d)}`;
};
const med = (xs: number[]) => s(xs)[Math.floor(xs.length / 2)]!;
console.log(`${N.toLocaleString('en')} rows × ${T.toLocaleString('en')} response tokens, ${reps} reps, each variant in its own process`);
console.log('| writer | seconds (min / median / max) | peak RSS, MB (rows alone) | file, MB | ÷ DuckDB (median s) |');
console.log('|---|---|---|---|---|');
for (const [v, xs] of Object.entries(results))
  console.log(
    `| ${v} | ${mmm(xs.map((x) => x.seconds))} | ${mmm(
      xs.map((x) => x.peakMb),
      0,
    )} (${med(xs.map((x) => x.rowsMb)).toFixed(0)}) | ${xs[0]!.sizeMb.toFixed(0)} | ${(med(xs.map((x) => x.seconds)) / med(results.duckdb!.map((x) => x.seconds))).toFixed(2)}× |`,
  );
