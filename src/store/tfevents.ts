/**
 * TensorBoard scalars without TensorFlow: the event file format written by hand, since no maintained
 * npm package writes it without a native build. A file is a sequence of TFRecords:
 *
 *   uint64 length (little-endian) · uint32 masked CRC-32C of those 8 bytes · data · uint32 masked CRC-32C of data
 *
 * with masked(c) = ((c >>> 15) | (c << 17)) + 0xa282ead8 (mod 2³²). Each record's data is an `Event`
 * protobuf (tensorflow/core/util/event.proto): the first holds `file_version: "brain.Event:2"`, every
 * other one `wall_time` (field 1, double, seconds), `step` (2, int64) and `summary` (5) with one
 * `Summary.Value` (1) per metric: `tag` (1, string) and `simple_value` (2, float).
 */

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven. */
const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC32C_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The TFRecord checksum: masked(c) = ((c >>> 15) | (c << 17)) + 0xa282ead8. */
export function maskedCrc(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord around `data`. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + 4 + data.length + 4);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc(data), true);
  return out;
}

/** Protobuf writing: just the wire types an Event of scalars needs. */
class Proto {
  private readonly parts: number[] = [];

  varint(field: number, value: number): this {
    return this.key(field, 0).raw(value);
  }

  double(field: number, value: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.key(field, 1).parts.push(...b);
    return this;
  }

  float(field: number, value: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.key(field, 5).parts.push(...b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2)
      .raw(value.length)
      .parts.push(...value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }

  private key(field: number, wire: number): this {
    return this.raw(field * 8 + wire);
  }

  /** A non-negative integer as a varint (steps and lengths: well below 2⁵³). */
  private raw(n: number): this {
    let v = n;
    while (v >= 0x80) {
      this.parts.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.parts.push(v);
    return this;
  }
}

/** The first record of every event file. */
export function fileVersionRecord(wallTimeSeconds: number): Uint8Array {
  return tfRecord(new Proto().double(1, wallTimeSeconds).string(3, 'brain.Event:2').done());
}

/** One step's scalars as one Event record (non-finite values are left out: TensorBoard cannot plot them). */
export function scalarsRecord(step: number, wallTimeSeconds: number, scalars: Record<string, number>): Uint8Array {
  const summary = new Proto();
  for (const [tag, value] of Object.entries(scalars)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    summary.bytes(1, new Proto().string(1, tag).float(2, value).done());
  }
  return tfRecord(new Proto().double(1, wallTimeSeconds).varint(2, step).bytes(5, summary.done()).done());
}
