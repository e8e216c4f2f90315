/**
 * zstd for the Tinker wire (`Content-Encoding: zstd` on a protobuf `forward_backward`, as the SDK sends
 * it when the engine's client config says `proto_compress_fwdbwd`). Node 20's zlib has no zstd; this is
 * libzstd compiled to WebAssembly (@foxglove/wasm-zstd), loaded on first use.
 *
 * Decompression is one-shot into a buffer of the caller's limit: libzstd stops with an error as soon as
 * the output would pass it, so a small body that expands to gigabytes (a zstd bomb) costs at most the
 * limit in memory and the time to write it.
 */

type Zstd = typeof import('@foxglove/wasm-zstd');
let loaded: Promise<Zstd> | undefined;

function zstd(): Promise<Zstd> {
  loaded ??= import('@foxglove/wasm-zstd').then(async (m) => {
    // The package is CommonJS: its functions sit on the default export under Node's ESM loader.
    const z = ((m as { default?: Zstd }).default ?? m) as Zstd;
    await z.isLoaded;
    return z;
  });
  return loaded;
}

/** Why a body was refused: not a zstd frame at all, one that declares or reaches more than the limit, or one that does not decompress. */
export type ZstdRefusal = 'not_zstd' | 'too_large' | 'unreadable';

/** A body that is not zstd, or that decompresses to more than the limit. */
export class ZstdBodyError extends Error {
  override name = 'ZstdBodyError';
  constructor(
    message: string,
    readonly reason: ZstdRefusal = 'unreadable',
  ) {
    super(message);
  }
}

export async function zstdCompress(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array((await zstd()).compress(bytes, 3));
}

const FRAME_MAGIC = 0xfd2fb528;
/** Skippable frames (RFC 8878 §3.1.2): magic 0x184D2A50 to 0x184D2A5F. */
const isSkippable = (magic: number) => magic >>> 4 === 0x184d2a5;

/**
 * The content size the first frame's header declares (RFC 8878 §3.1.1.1), when it declares one; null for
 * bytes that are not a zstd frame.
 */
function declaredSize(bytes: Uint8Array): { size?: number } | null {
  if (bytes.length < 4) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (isSkippable(magic)) return {};
  if (magic !== FRAME_MAGIC || bytes.length < 5) return null;
  const descriptor = bytes[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag]!;
  if (sizeBytes === 0) return {};
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
  if (bytes.length < at + sizeBytes) return {};
  const size =
    sizeBytes === 1
      ? view.getUint8(at)
      : sizeBytes === 2
        ? view.getUint16(at, true) + 256
        : sizeBytes === 4
          ? view.getUint32(at, true)
          : Number(view.getBigUint64(at, true));
  return { size };
}

/**
 * The decompressed bytes, at most `maxBytes` of them. ZstdBodyError says why not: `not_zstd` for bytes
 * without a zstd frame's magic number, `too_large` for a frame that declares more than the limit,
 * `unreadable` for one that fails to decompress within it (corrupt, or past the limit without saying so).
 */
export async function zstdDecompress(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const header = declaredSize(bytes);
  if (!header) throw new ZstdBodyError('not a zstd frame (no zstd magic number at its start)', 'not_zstd');
  if (header.size !== undefined && header.size > maxBytes)
    throw new ZstdBodyError(`a zstd frame of ${header.size.toLocaleString('en')} bytes, more than ${maxBytes.toLocaleString('en')}`, 'too_large');
  const z = await zstd();
  try {
    // A view of the result, not a copy: the body can be the whole bound.
    const out = z.decompress(bytes, maxBytes);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch {
    throw new ZstdBodyError(`a zstd body that does not decompress to at most ${maxBytes.toLocaleString('en')} bytes (corrupt, or larger)`, 'unreadable');
  }
}
