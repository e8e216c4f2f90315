/**
 * GGUF v3 (ggml's model file) as data: typed metadata values and F32 tensors. Layout on disk
 * (little-endian): "GGUF", version u32, tensor count u64, metadata count u64; metadata as
 * (key string, value type u32, value); tensor infos as (name, n_dims u32, dims u64… innermost first,
 * ggml type u32, offset u64 from the data section); padding to `general.alignment` (default 32);
 * then the tensor data, each tensor aligned. Strings are a u64 byte length then UTF-8 bytes.
 */

/** GGUF metadata value types (gguf_type). */
export const GGUF_TYPE = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  string: 8,
  array: 9,
  u64: 10,
  i64: 11,
  f64: 12,
} as const;

export type GgufScalarType = Exclude<keyof typeof GGUF_TYPE, 'array'>;

/** One metadata value: a scalar or a homogeneous array of scalars. u64/i64 are held as bigint. */
export type GgufValue =
  | { type: Exclude<GgufScalarType, 'string' | 'bool' | 'u64' | 'i64'>; value: number }
  | { type: 'u64' | 'i64'; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; of: Exclude<GgufScalarType, 'u64' | 'i64'>; value: Array<number | string | boolean> };

/** A tensor in F32 (ggml type 0), the only type this module writes or reads. `dims` innermost first. */
export interface GgufTensor {
  name: string;
  dims: number[];
  data: Float32Array;
}

export interface GgufFile {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensor[];
}

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGML_TYPE_F32 = 0;
export const DEFAULT_ALIGNMENT = 32;

/** A file that is not GGUF v2/v3 F32, or is truncated; the message says what and at which byte. */
export class GgufError extends Error {
  override name = 'GgufError';
}

/** Metadata constructors, so callers write `meta.u32(4)` instead of object literals. */
export const meta = {
  u32: (value: number): GgufValue => ({ type: 'u32', value }),
  i32: (value: number): GgufValue => ({ type: 'i32', value }),
  f32: (value: number): GgufValue => ({ type: 'f32', value }),
  bool: (value: boolean): GgufValue => ({ type: 'bool', value }),
  str: (value: string): GgufValue => ({ type: 'string', value }),
  strings: (value: string[]): GgufValue => ({ type: 'array', of: 'string', value }),
  f32s: (value: number[]): GgufValue => ({ type: 'array', of: 'f32', value }),
  i32s: (value: number[]): GgufValue => ({ type: 'array', of: 'i32', value }),
};
