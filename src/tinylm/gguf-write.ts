import { DEFAULT_ALIGNMENT, GGML_TYPE_F32, GGUF_MAGIC, GGUF_TYPE, GgufError, type GgufScalarType, type GgufTensor, type GgufValue } from './gguf-format.ts';

/** A growable little-endian byte sink. */
class Sink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(x: number) {
    this.ensure(1);
    this.view.setUint8(this.length, x);
    this.length += 1;
  }
  u32(x: number) {
    this.ensure(4);
    this.view.setUint32(this.length, x, true);
    this.length += 4;
  }
  u64(x: bigint | number) {
    this.ensure(8);
    this.view.setBigUint64(this.length, BigInt(x), true);
    this.length += 8;
  }
  bytes(b: Uint8Array) {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  pad(align: number) {
    while (this.length % align !== 0) this.u8(0);
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  scalar(type: GgufScalarType, v: number | bigint | string | boolean, where: string) {
    this.ensure(8);
    const d = this.view,
      o = this.length;
    switch (type) {
      case 'u8':
        d.setUint8(o, num(v, where));
        this.length += 1;
        return;
      case 'i8':
        d.setInt8(o, num(v, where));
        this.length += 1;
        return;
      case 'u16':
        d.setUint16(o, num(v, where), true);
        this.length += 2;
        return;
      case 'i16':
        d.setInt16(o, num(v, where), true);
        this.length += 2;
        return;
      case 'u32':
        d.setUint32(o, num(v, where), true);
        this.length += 4;
        return;
      case 'i32':
        d.setInt32(o, num(v, where), true);
        this.length += 4;
        return;
      case 'f32':
        d.setFloat32(o, num(v, where), true);
        this.length += 4;
        return;
      case 'f64':
        d.setFloat64(o, num(v, where), true);
        this.length += 8;
        return;
      case 'u64':
        d.setBigUint64(o, BigInt(v as bigint), true);
        this.length += 8;
        return;
      case 'i64':
        d.setBigInt64(o, BigInt(v as bigint), true);
        this.length += 8;
        return;
      case 'bool':
        d.setUint8(o, v ? 1 : 0);
        this.length += 1;
        return;
      case 'string':
        if (typeof v !== 'string') throw new GgufError(`${where}: expected a string, got ${typeof v}`);
        this.str(v);
        return;
    }
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function num(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new GgufError(`${where}: expected a finite number, got ${String(v)}`);
  return v;
}

/**
 * Serialises a GGUF v3 file: metadata in the given order, then F32 tensors, each at an offset
 * aligned to `general.alignment` (32 unless the metadata sets it). Throws GgufError when a tensor's
 * data length is not the product of its dims.
 */
export function writeGguf(metadata: ReadonlyMap<string, GgufValue> | Record<string, GgufValue>, tensors: readonly GgufTensor[]): Uint8Array {
  const entries: Array<[string, GgufValue]> = isMap(metadata) ? [...metadata.entries()] : Object.entries(metadata);
  const alignEntry = entries.find(([k]) => k === 'general.alignment')?.[1];
  const align = alignEntry && alignEntry.type === 'u32' ? alignEntry.value : DEFAULT_ALIGNMENT;
  const s = new Sink();
  s.u32(GGUF_MAGIC);
  s.u32(3);
  s.u64(tensors.length);
  s.u64(entries.length);
  for (const [key, v] of entries) {
    s.str(key);
    s.u32(GGUF_TYPE[v.type]);
    if (v.type === 'array') {
      s.u32(GGUF_TYPE[v.of]);
      s.u64(v.value.length);
      v.value.forEach((x, i) => s.scalar(v.of, x, `${key}[${i}]`));
    } else {
      s.scalar(v.type, v.value, key);
    }
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new GgufError(`tensor ${t.name}: dims [${t.dims.join(', ')}] hold ${n} floats but data has ${t.data.length}`);
    s.str(t.name);
    s.u32(t.dims.length);
    for (const d of t.dims) s.u64(d);
    s.u32(GGML_TYPE_F32);
    s.u64(offset);
    offsets.push(offset);
    offset += Math.ceil((n * 4) / align) * align;
  }
  s.pad(align);
  const base = s.length;
  for (let i = 0; i < tensors.length; i++) {
    const t = tensors[i]!;
    while (s.length < base + offsets[i]!) s.u8(0);
    s.bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  s.pad(align);
  return s.result();
}

function isMap(m: ReadonlyMap<string, GgufValue> | Record<string, GgufValue>): m is ReadonlyMap<string, GgufValue> {
  return m instanceof Map;
}
