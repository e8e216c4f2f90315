/**
 * Walks a GGUF file's header (metadata and tensor infos) without keeping it, checking every count and
 * length against the bytes the file has left before anything is allocated or looped over, and that
 * every tensor's data lies inside the file. llama.cpp trusts these numbers: a 24-byte file claiming
 * 2^63−1 tensors made `serve --model` grow to 2.4 GB and never listen, and a truncated model printed
 * llama.cpp's log lines before our error. Messages name byte offsets and entry numbers, never the
 * file's own bytes (`/reload` answers them to a client, who must not learn what a file contains).
 */
import { readSync } from 'node:fs';

/** Fewest bytes a metadata entry takes: key length (8), value type (4), a 1-byte value (an empty key is possible). */
const MIN_KV_BYTES = 8n + 4n + 1n;
/** Fewest bytes a tensor info takes: name length (8), n_dims (4), type (4), offset (8). */
const MIN_TENSOR_INFO_BYTES = 8n + 4n + 4n + 8n;
/** ggml's GGML_MAX_DIMS. */
const MAX_DIMS = 4;

/** Bytes of a metadata scalar by gguf_type (string: 8 is its length prefix, the least it takes). */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 8: 8, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;

/**
 * [elements per block, bytes per block] of every ggml tensor type this build of llama.cpp loads (the
 * values its ggml reports; test/tinylm/gguf-hostile.test.ts checks them against the binding). A type
 * not listed (removed repacked variants 4, 5, 31–33, 36–38, or newer than this build) is refused.
 */
export const TYPE_LAYOUT: Record<number, [bigint, bigint]> = {
  0: [1n, 4n], // F32
  1: [1n, 2n], // F16
  2: [32n, 18n], // Q4_0: an f16 scale + 32 4-bit values
  3: [32n, 20n], // Q4_1
  6: [32n, 22n], // Q5_0
  7: [32n, 24n], // Q5_1
  8: [32n, 34n], // Q8_0: an f16 scale + 32 int8
  9: [32n, 36n], // Q8_1
  10: [256n, 84n], // Q2_K
  11: [256n, 110n], // Q3_K
  12: [256n, 144n], // Q4_K
  13: [256n, 176n], // Q5_K
  14: [256n, 210n], // Q6_K
  15: [256n, 292n], // Q8_K
  16: [256n, 66n], // IQ2_XXS
  17: [256n, 74n], // IQ2_XS
  18: [256n, 98n], // IQ3_XXS
  19: [256n, 50n], // IQ1_S
  20: [32n, 18n], // IQ4_NL
  21: [256n, 110n], // IQ3_S
  22: [256n, 82n], // IQ2_S
  23: [256n, 136n], // IQ4_XS
  24: [1n, 1n], // I8
  25: [1n, 2n], // I16
  26: [1n, 4n], // I32
  27: [1n, 8n], // I64
  28: [1n, 8n], // F64
  29: [256n, 56n], // IQ1_M
  30: [1n, 2n], // BF16
  34: [256n, 54n], // TQ1_0
  35: [256n, 66n], // TQ2_0
  39: [32n, 17n], // MXFP4
  40: [64n, 36n], // NVFP4
  41: [128n, 18n], // Q1_0
  42: [64n, 18n], // Q2_0
};

/** Why a GGUF header cannot be trusted, in words that carry no byte of the file. */
export class GgufHeaderError extends Error {
  override name = 'GgufHeaderError';
}

/** Reads forward through an open file in 1 MiB windows, never past its size. */
class Cursor {
  private window = Buffer.alloc(0);
  private windowAt = 0;
  pos = 0;
  constructor(
    private readonly fd: number,
    readonly size: bigint,
  ) {}

  get left(): bigint {
    return this.size - BigInt(this.pos);
  }

  /** `n` bytes at the cursor (n ≤ 8 here), refusing to read past the end. */
  private take(n: number, what: string): Buffer {
    if (BigInt(n) > this.left) throw new GgufHeaderError(`truncated at byte ${this.pos} while reading ${what} (the file has ${this.size} bytes)`);
    if (this.pos < this.windowAt || this.pos + n > this.windowAt + this.window.length) {
      const len = Number(this.left < 1_048_576n ? this.left : 1_048_576n);
      this.window = Buffer.alloc(len);
      readSync(this.fd, this.window, 0, len, this.pos);
      this.windowAt = this.pos;
    }
    const at = this.pos - this.windowAt;
    this.pos += n;
    return this.window.subarray(at, at + n);
  }
  u32(what: string): number {
    return this.take(4, what).readUInt32LE(0);
  }
  u64(what: string): bigint {
    return this.take(8, what).readBigUInt64LE(0);
  }
  /** Moves past `n` bytes that must all lie in the file. */
  skip(n: bigint, what: string): void {
    if (n > this.left) throw new GgufHeaderError(`${what} at byte ${this.pos} claims ${n} bytes, but only ${this.left} are left in the file`);
    this.pos += Number(n);
  }
  /** A string's bytes are skipped: nothing from the file is kept or shown. */
  skipString(what: string): void {
    this.skip(this.u64(`${what} length`), what);
  }
}

/** Checks the header and tensor layout of the open GGUF file `fd` of `size` bytes; closes nothing. */
export function checkGgufHeader(fd: number, size: number): void {
  const c = new Cursor(fd, BigInt(size));
  if (c.u32('the magic') !== 0x46554747) throw new GgufHeaderError('is not a GGUF file (it does not start with "GGUF")');
  const version = c.u32('the version');
  if (version !== 2 && version !== 3) throw new GgufHeaderError(`GGUF version ${version} is not supported (2 or 3)`);
  const nTensors = c.u64('the tensor count');
  const nKv = c.u64('the metadata count');
  // Before any loop: the counts must fit in the bytes left, at the fewest bytes an entry can take.
  const least = nKv * MIN_KV_BYTES + nTensors * MIN_TENSOR_INFO_BYTES;
  if (least > c.left)
    throw new GgufHeaderError(
      `claims ${nKv} metadata entries and ${nTensors} tensors, which need at least ${least} bytes, but the file has ${c.left} after its 24-byte preamble`,
    );
  let alignment = 32;
  for (let i = 0n; i < nKv; i++) {
    const what = `metadata entry #${i}`;
    const keyAt = c.pos;
    const keyLength = c.u64(`${what} key length`);
    c.skip(keyLength, `${what} key`);
    const isAlignment = keyLength === 17n && readAt(fd, keyAt + 8, 17) === 'general.alignment';
    const type = c.u32(`${what} type`);
    if (type === ARRAY) {
      const of = c.u32(`${what} element type`);
      if (of === ARRAY || SCALAR_BYTES[of] === undefined)
        throw new GgufHeaderError(`${what} at byte ${keyAt}: array element type ${of} is not a GGUF scalar type`);
      const n = c.u64(`${what} array length`);
      if (n * BigInt(SCALAR_BYTES[of]!) > c.left)
        throw new GgufHeaderError(`${what} at byte ${keyAt}: an array of ${n} elements cannot fit in the ${c.left} bytes left`);
      if (of === STRING) for (let j = 0n; j < n; j++) c.skipString(`${what} element ${j}`);
      else c.skip(n * BigInt(SCALAR_BYTES[of]!), `${what} array`);
    } else if (type === STRING) {
      c.skipString(`${what} value`);
    } else if (SCALAR_BYTES[type] !== undefined) {
      if (isAlignment && type === 4) {
        alignment = c.u32(`${what} value`);
        if (alignment === 0 || (alignment & (alignment - 1)) !== 0) throw new GgufHeaderError(`general.alignment is ${alignment}; it must be a power of two`);
      } else c.skip(BigInt(SCALAR_BYTES[type]!), `${what} value`);
    } else throw new GgufHeaderError(`${what} at byte ${keyAt}: value type ${type} is not a GGUF type`);
  }
  const tensors: Array<{ offset: bigint; bytes: bigint }> = [];
  for (let i = 0n; i < nTensors; i++) {
    const what = `tensor #${i}`;
    const at = c.pos;
    c.skipString(`${what} name`);
    const nDims = c.u32(`${what} dimension count`);
    if (nDims > MAX_DIMS) throw new GgufHeaderError(`${what} at byte ${at}: ${nDims} dimensions (ggml allows at most ${MAX_DIMS})`);
    let elements = 1n;
    for (let d = 0; d < nDims; d++) elements *= c.u64(`${what} dimension ${d}`);
    const type = c.u32(`${what} type`);
    const layout = TYPE_LAYOUT[type];
    if (!layout) throw new GgufHeaderError(`${what} at byte ${at}: ggml type ${type} is not one this llama.cpp build loads`);
    const offset = c.u64(`${what} data offset`);
    tensors.push({ offset, bytes: ((elements + layout[0] - 1n) / layout[0]) * layout[1] });
  }
  const dataStart = BigInt(Math.ceil(c.pos / alignment) * alignment);
  for (const [i, t] of tensors.entries()) {
    const start = dataStart + t.offset;
    const end = start + t.bytes;
    if (start > c.size || end > c.size)
      throw new GgufHeaderError(
        `tensor #${i}'s data (bytes ${start}–${end}) runs past the end of the file (${c.size} bytes): the file is truncated or damaged`,
      );
  }
}

/** A few bytes at a position, only to compare against a known key name. */
function readAt(fd: number, pos: number, n: number): string {
  const b = Buffer.alloc(n);
  readSync(fd, b, 0, n, pos);
  return b.toString('latin1');
}
