/**
 * Binary snapshots of predictors: a magic line, a JSON header, then typed-array blobs (4-byte aligned)
 * listed in the header. Float32 weights are stored bit-exactly, so a loaded model predicts exactly as
 * the saved one did.
 */

const MAGIC = 'TRACE-PREDICTOR/1\n';

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

/**
 * A snapshot header's list of [prompt id, x, y] rows (per-prompt counts), refused by name unless it is a
 * list and every row is a string and two finite numbers that `ok` accepts: a checkpoint file is input.
 */
export function promptRows(rows: unknown, owner: string, list: string, want: string, ok: (x: number, y: number) => boolean): Array<[string, number, number]> {
  if (!Array.isArray(rows)) throw new SnapshotError(`${owner} snapshot has no ${list} list: the snapshot is damaged`);
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  return rows.map((row: unknown, i) => {
    if (!(Array.isArray(row) && row.length === 3 && typeof row[0] === 'string' && finite(row[1]) && finite(row[2]) && ok(row[1], row[2]))) {
      throw new SnapshotError(`${owner} snapshot's ${list} row ${i} is ${JSON.stringify(row)?.slice(0, 80)}, not ${want}: the snapshot is damaged`);
    }
    return [row[0], row[1], row[2]];
  });
}

type Blob = Float32Array | Int32Array;
interface BlobEntry {
  name: string;
  type: 'f32' | 'i32';
  length: number;
}

export function encodeSnapshot(header: Record<string, unknown>, blobs: Record<string, Blob> = {}): Uint8Array {
  const entries: BlobEntry[] = Object.entries(blobs).map(([name, b]) => ({ name, type: b instanceof Float32Array ? 'f32' : 'i32', length: b.length }));
  const head = new TextEncoder().encode(MAGIC + JSON.stringify({ ...header, blobs: entries }));
  const headPadded = Math.ceil((4 + head.length) / 4) * 4;
  const total = headPadded + entries.reduce((s, e) => s + 4 * e.length, 0);
  const out = new Uint8Array(total);
  new DataView(out.buffer).setUint32(0, head.length, true);
  out.set(head, 4);
  let offset = headPadded;
  for (const b of Object.values(blobs)) {
    out.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), offset);
    offset += b.byteLength;
  }
  return out;
}

export function decodeSnapshot(bytes: Uint8Array): { header: Record<string, unknown>; blobs: Record<string, Blob> } {
  if (bytes.length < 4) throw new SnapshotError(`snapshot of ${bytes.length} bytes is too short: pass the bytes returned by save()`);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + headLength > bytes.length) throw new SnapshotError('snapshot header runs past the end: the snapshot is truncated');
  const text = new TextDecoder().decode(bytes.subarray(4, 4 + headLength));
  if (!text.startsWith(MAGIC)) throw new SnapshotError(`not a predictor snapshot (expected it to start with "${MAGIC.trim()}")`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(text.slice(MAGIC.length)) as Record<string, unknown>;
  } catch (e) {
    throw new SnapshotError(`snapshot header is not valid JSON: ${(e as Error).message}`);
  }
  const entries = (header.blobs ?? []) as BlobEntry[];
  const blobs: Record<string, Blob> = {};
  let offset = Math.ceil((4 + headLength) / 4) * 4;
  for (const e of entries) {
    const byteLength = 4 * e.length;
    if (offset + byteLength > bytes.length) throw new SnapshotError(`snapshot blob "${e.name}" runs past the end: the snapshot is truncated`);
    const copy = bytes.slice(offset, offset + byteLength);
    blobs[e.name] = e.type === 'f32' ? new Float32Array(copy.buffer) : new Int32Array(copy.buffer);
    offset += byteLength;
  }
  return { header, blobs };
}
