/**
 * What crosses the wire of `serve --tinker` besides JSON: the SDK's protobuf `forward_backward`
 * (`application/x-protobuf`, optionally `Content-Encoding: zstd`) and protobuf results for a client that
 * asks for them (`Accept: application/x-protobuf` on `retrieve_future`, as the SDK does for sample and
 * forward_backward results). Every body is bounded twice: the server's body limit on the bytes that
 * arrive, and `maxDecodedBytes` on what a zstd body decompresses to.
 */
import type { Context } from 'hono';
import { HttpError, readJson, tooLarge, zodMessage } from '../../http/index.ts';
import { decodeForwardBackward, encodeForwardBackwardOutput, encodeSampleResponse, PROTOBUF, ProtoBodyError } from '../../policy/tinker/proto-codec.ts';
import { forwardBackwardOutputSchema, forwardBackwardSchema, sampleResponseSchema, type ForwardBackwardRequest } from '../../policy/tinker/wire.ts';
import { zstdDecompress, ZstdBodyError } from '../../policy/tinker/zstd.ts';

const mediaType = (header: string | undefined) => (header ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Refuses a body this server cannot read, before its route runs: JSON everywhere, protobuf (optionally
 * zstd) where the SDK sends it (`protobufPaths`), no other content encoding.
 */
export function checkBodyType(c: Context, protobufPaths: ReadonlySet<string>): void {
  if (c.req.method !== 'POST') return;
  const type = mediaType(c.req.header('content-type'));
  const encoding = mediaType(c.req.header('content-encoding'));
  const protobufHere = protobufPaths.has(c.req.path);
  if (type === PROTOBUF && protobufHere) {
    if (encoding !== '' && encoding !== 'identity' && encoding !== 'zstd')
      throw new HttpError(415, `content-encoding ${encoding.slice(0, 40)}: this server takes zstd or none`, 'unsupported_encoding');
    return;
  }
  if (type === 'application/json' && (encoding === '' || encoding === 'identity')) return;
  if (type === 'application/json')
    throw new HttpError(415, `content-encoding ${encoding.slice(0, 40)}: JSON bodies are sent uncompressed`, 'unsupported_encoding');
  throw new HttpError(
    415,
    `content-type ${type.slice(0, 60) || 'none'}: send JSON (application/json)${protobufHere ? ` or the SDK's protobuf (${PROTOBUF})` : ''}`,
    'unsupported_media_type',
  );
}

/** A forward_backward request, JSON or the SDK's protobuf (zstd or not), validated by wire.ts's schema. */
export async function readForwardBackward(c: Context, maxDecodedBytes: number): Promise<ForwardBackwardRequest & { forward_only: boolean }> {
  if (mediaType(c.req.header('content-type')) !== PROTOBUF) return { ...(await readJson(c, forwardBackwardSchema)), forward_only: false };
  let bytes: Uint8Array = new Uint8Array(await c.req.arrayBuffer());
  if (mediaType(c.req.header('content-encoding')) === 'zstd') {
    try {
      bytes = await zstdDecompress(bytes, maxDecodedBytes);
    } catch (e) {
      if (e instanceof ZstdBodyError)
        throw new HttpError(413, `zstd body: ${e.message} (--max-decoded-bytes); send smaller forward_backward chunks`, 'decoded_body_too_large');
      throw e;
    }
  } else if (bytes.length > maxDecodedBytes) throw tooLarge('protobuf body', maxDecodedBytes, 'bytes', '--max-decoded-bytes', 'decoded_body_too_large');
  let decoded;
  try {
    decoded = decodeForwardBackward(bytes);
  } catch (e) {
    if (e instanceof ProtoBodyError) throw new HttpError(400, `protobuf forward_backward: ${e.message}`, 'invalid_body');
    throw e;
  }
  const parsed = forwardBackwardSchema.safeParse(decoded);
  if (!parsed.success) throw new HttpError(400, `protobuf forward_backward: ${zodMessage(parsed.error)}`, 'invalid_body');
  return { ...parsed.data, forward_only: decoded.forward_only };
}

/** The kinds of result that have a protobuf form. */
export type ProtoResult = 'sample' | 'forward_backward';

/** A future's result: protobuf when the client accepts it and the result has that form, JSON otherwise. */
export function answerResult(c: Context, value: Record<string, unknown>, kind: ProtoResult | undefined): Response {
  const accepts = (c.req.header('accept') ?? '').toLowerCase().includes(PROTOBUF);
  if (!accepts || !kind) return c.json(value);
  const bytes =
    kind === 'sample' ? encodeSampleResponse(sampleResponseSchema.parse(value)) : encodeForwardBackwardOutput(forwardBackwardOutputSchema.parse(value));
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { 'content-type': PROTOBUF });
}
