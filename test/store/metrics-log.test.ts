/**
 * The metrics stream beside the store: metrics.jsonl (one object per step) and metrics.csv (long
 * form) hold exactly the stored metrics, a step's line is there as soon as the step is stored (not at
 * the end of the run), and a resumed run continues both from the store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32c, maskedCrc, METRICS_CSV, METRICS_JSONL, METRICS_TFEVENTS, RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

const CONFIG = {
  steps: 3,
  pool: 4,
  strategy: { name: 'grpo', budget: 8 },
  env: { questions: 100 },
  eval: { every: 5, questions: 5 },
  policy: { warmStart: 'none' },
};

const jsonl = (dir: string) =>
  readFileSync(join(dir, METRICS_JSONL), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

/** metrics.csv back into per-step objects. */
function csv(dir: string): Map<number, Record<string, number>> {
  const [header, ...lines] = readFileSync(join(dir, METRICS_CSV), 'utf8').trim().split('\n');
  assert.equal(header, 'step,metric,value');
  const out = new Map<number, Record<string, number>>();
  for (const line of lines) {
    const [step, key, value] = line.split(',');
    const row = out.get(Number(step)) ?? {};
    row[key!] = Number(value);
    out.set(Number(step), row);
  }
  return out;
}

function stored(dir: string) {
  const store = RunStore.open(dir, { readonly: true });
  try {
    return store.steps().map((s) => ({ step: s.step, ...s.metrics }));
  } finally {
    store.close();
  }
}

test('metrics.jsonl and metrics.csv hold the stored metrics, each step as soon as it is stored; resume continues them', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-metrics-')), 'run');
  const seenAtStep: number[] = [];
  await train({
    out,
    config: CONFIG,
    clock: () => performance.now(),
    onEvent: (e) => {
      if (e.kind === 'step') seenAtStep.push(jsonl(out).length);
    },
  });
  assert.deepEqual(seenAtStep, [1, 2, 3], 'the line of step N is written when step N is stored');
  const rows = stored(out);
  assert.deepEqual(jsonl(out), rows);
  assert.ok('test_accuracy' in rows[0]! && !('test_accuracy' in rows[1]!), 'an evaluation key appears on its steps only (0 and the last)');
  const fromCsv = csv(out);
  for (const r of rows) {
    const { step, ...metrics } = r;
    assert.deepEqual(fromCsv.get(step), metrics);
  }

  await train({ out, resume: true, steps: 4, clock: () => performance.now() });
  const after = stored(out);
  assert.equal(after.length, 4);
  assert.deepEqual(jsonl(out), after, 'the resumed run continues the stream, the earlier steps once each');
  assert.equal(csv(out).size, 4);
});

test('a run whose start fails leaves no metrics files behind', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-metrics-')), 'bad');
  await assert.rejects(train({ out, config: { ...CONFIG, policy: { kind: 'tiny-lm', model: '/nonexistent.gguf' } }, clock: () => performance.now() }));
  assert.ok(!existsSync(join(out, METRICS_JSONL)) && !existsSync(join(out, METRICS_CSV)));
});

/** A generic protobuf reader (field number → list of raw values), written apart from the encoder. */
function protoFields(b: Uint8Array): Map<number, Array<number | bigint | Uint8Array>> {
  const out = new Map<number, Array<number | bigint | Uint8Array>>();
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = b[i++]!;
      v |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return v;
    }
  };
  while (i < b.length) {
    const key = Number(varint());
    const [field, wire] = [key >> 3, key & 7];
    let value: number | bigint | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 1) ((value = view.getFloat64(i, true)), (i += 8));
    else if (wire === 5) ((value = view.getFloat32(i, true)), (i += 4));
    else if (wire === 2) {
      const n = Number(varint());
      value = b.subarray(i, i + n);
      i += n;
    } else throw new Error(`wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

/** The TFRecords of an event file, each checksum verified. */
function tfRecords(bytes: Uint8Array): Uint8Array[] {
  const records: Uint8Array[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < bytes.length;) {
    const n = Number(view.getBigUint64(i, true));
    assert.equal(view.getUint32(i + 8, true), maskedCrc(bytes.subarray(i, i + 8)), 'length checksum');
    const data = bytes.subarray(i + 12, i + 12 + n);
    assert.equal(view.getUint32(i + 12 + n, true), maskedCrc(data), 'data checksum');
    records.push(data);
    i += 16 + n;
  }
  return records;
}

test('CRC-32C is the Castagnoli checksum (its standard check value)', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa, 'RFC 3720 B.4: 32 bytes of zeros');
});

test('the TensorBoard event file reads back: file version first, then one Event per stored step with every finite metric as a float scalar', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-metrics-')), 'tb');
  let now = 1_700_000_000_000;
  await train({ out, config: { ...CONFIG, steps: 2 }, clock: () => performance.now(), wallClock: () => (now += 1000) });
  const [version, ...events] = tfRecords(new Uint8Array(readFileSync(join(out, METRICS_TFEVENTS))));
  assert.equal(new TextDecoder().decode(protoFields(version!).get(3)![0] as Uint8Array), 'brain.Event:2');
  const rows = stored(out);
  assert.equal(events.length, rows.length);
  events.forEach((data, k) => {
    const e = protoFields(data);
    assert.equal(e.get(2)![0], BigInt(rows[k]!.step));
    assert.ok((e.get(1)![0] as number) > 1_700_000_000, 'wall time in seconds from the wall clock');
    const scalars: Record<string, number> = {};
    for (const v of protoFields(e.get(5)![0] as Uint8Array).get(1) as Uint8Array[]) {
      const f = protoFields(v);
      // + 0: the store keeps -0 as 0 (JSON), the event file as -0.
      scalars[new TextDecoder().decode(f.get(1)![0] as Uint8Array)] = (f.get(2)![0] as number) + 0;
    }
    const { step: _step, ...metrics } = rows[k]!;
    const finite = Object.fromEntries(
      Object.entries(metrics as Record<string, number>)
        .filter(([, x]) => Number.isFinite(x))
        .map(([key, x]) => [key, Math.fround(x)]),
    );
    assert.deepEqual(scalars, finite);
    assert.ok(Object.keys(finite).length > 10);
  });
});
