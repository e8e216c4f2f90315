import {
  DEFAULT_ALIGNMENT,
  GGML_TYPE_F32,
  GGUF_MAGIC,
  GGUF_TYPE,
  GgufError,
  type GgufFile,
  type GgufScalarType,
  type GgufTensor,
  type GgufValue,
} from './gguf-format.ts';

const TYPE_NAME = new Map<number, keyof typeof GGUF_TYPE>(Object.entries(GGUF_TYPE).map(([k, v]) => [v, k as keyof typeof GGUF_TYPE]));

/** A bounds-checked little-endian reader; errors name the byte offset. */
class Source {
  private readonly view: DataView;
  pos = 0;
  constructor(
    readonly bytes: Uint8Array,
    private readonly file: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  need(n: number, what: string) {
    if (this.pos + n > this.bytes.length)
      throw new GgufError(`${this.file}: truncated at byte ${this.pos} while reading ${what} (file has ${this.bytes.length} bytes)`);
  }
  u32(what: string) {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(what: string) {
    this.need(8, what);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufError(`${this.file}: ${what} = ${v} at byte ${this.pos - 8} is too large`);
    return Number(v);
  }
  str(what: string) {
    const n = this.u64(`${what} length`);
    this.need(n, what);
    const s = new TextDecoder('utf-8', { fatal: false }).decode(this.bytes.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
  scalar(type: GgufScalarType, what: string): number | bigint | string | boolean {
    const d = this.view,
      o = this.pos;
    const size = { u8: 1, i8: 1, bool: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, u64: 8, i64: 8, f64: 8, string: 0 }[type];
    if (type === 'string') return this.str(what);
    this.need(size, what);
    this.pos += size;
    switch (type) {
      case 'u8':
        return d.getUint8(o);
      case 'i8':
        return d.getInt8(o);
      case 'bool':
        return d.getUint8(o) !== 0;
      case 'u16':
        return d.getUint16(o, true);
      case 'i16':
        return d.getInt16(o, true);
      case 'u32':
        return d.getUint32(o, true);
      case 'i32':
        return d.getInt32(o, true);
      case 'f32':
        return d.getFloat32(o, true);
      case 'f64':
        return d.getFloat64(o, true);
      case 'u64':
        return d.getBigUint64(o, true);
      case 'i64':
        return d.getBigInt64(o, true);
    }
  }
  type(what: string): keyof typeof GGUF_TYPE {
    const at = this.pos;
    const t = TYPE_NAME.get(this.u32(what));
    if (t === undefined) throw new GgufError(`${this.file}: unknown value type at byte ${at} (${what})`);
    return t;
  }
}

/**
 * Parses a GGUF v2/v3 file whose tensors are all F32 (what {@link writeGguf} writes and what the
 * tiny-LM trainer reads back). `file` only labels error messages. Tensor data is copied out, so the
 * result does not alias `bytes`.
 */
export function readGguf(bytes: Uint8Array, file = 'gguf'): GgufFile {
  const src = new Source(bytes, file);
  if (src.u32('magic') !== GGUF_MAGIC) throw new GgufError(`${file}: not a GGUF file (magic is not "GGUF")`);
  const version = src.u32('version');
  if (version !== 2 && version !== 3) throw new GgufError(`${file}: GGUF version ${version} is not supported (2 or 3)`);
  const nTensors = src.u64('tensor count');
  const nKv = src.u64('metadata count');
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < nKv; i++) {
    const key = src.str(`metadata key #${i}`);
    const type = src.type(key);
    if (type === 'array') {
      const of = src.type(`${key} element type`);
      if (of === 'array' || of === 'u64' || of === 'i64') throw new GgufError(`${file}: ${key}: arrays of ${of} are not supported`);
      const n = src.u64(`${key} length`);
      const value: Array<number | string | boolean> = [];
      for (let j = 0; j < n; j++) value.push(src.scalar(of, `${key}[${j}]`) as number | string | boolean);
      metadata.set(key, { type: 'array', of, value });
    } else {
      metadata.set(key, { type, value: src.scalar(type, key) } as GgufValue);
    }
  }
  const infos: Array<{ name: string; dims: number[]; offset: number }> = [];
  for (let i = 0; i < nTensors; i++) {
    const name = src.str(`tensor name #${i}`);
    const nd = src.u32(`${name} n_dims`);
    const dims = Array.from({ length: nd }, (_, j) => src.u64(`${name} dim ${j}`));
    const type = src.u32(`${name} type`);
    if (type !== GGML_TYPE_F32) throw new GgufError(`${file}: tensor ${name} has ggml type ${type}; only F32 (0) is supported`);
    infos.push({ name, dims, offset: src.u64(`${name} offset`) });
  }
  const alignValue = metadata.get('general.alignment');
  const align = alignValue?.type === 'u32' ? alignValue.value : DEFAULT_ALIGNMENT;
  const base = Math.ceil(src.pos / align) * align;
  const tensors: GgufTensor[] = infos.map(({ name, dims, offset }) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const start = base + offset;
    if (start + n * 4 > bytes.length) throw new GgufError(`${file}: tensor ${name} (${n} floats at byte ${start}) runs past the end of the file`);
    const data = new Float32Array(n);
    new Uint8Array(data.buffer).set(bytes.subarray(start, start + n * 4));
    return { name, dims, data };
  });
  return { version, metadata, tensors };
}
