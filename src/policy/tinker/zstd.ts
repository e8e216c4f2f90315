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

/** A body that is not zstd, or that decompresses to more than the limit. */
export class ZstdBodyError extends Error {
  override name = 'ZstdBodyError';
}

export async function zstdCompress(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array((await zstd()).compress(bytes, 3));
}

/** The decompressed bytes, at most `maxBytes` of them (ZstdBodyError past that, or for a body that is not zstd). */
export async function zstdDecompress(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const z = await zstd();
  try {
    return new Uint8Array(z.decompress(bytes, maxBytes));
  } catch {
    throw new ZstdBodyError(`not a zstd body that decompresses to at most ${maxBytes.toLocaleString('en')} bytes`);
  }
}
