/**
 * What crosses the wire of `serve --tinker` besides JSON: the SDK's protobuf `forward_backward`
 * (`application/x-protobuf`, optionally `Content-Encoding: zstd`) and protobuf results for a client that
 * asks for them (`Accept: application/x-protobuf` on `retrieve_future`, as the SDK does for sample and
 * forward_backward results). Every body is bounded three times: the server's body limit on the bytes
 * that arrive, `decodedBytes` on what a zstd body decompresses to, and the counted elements and tokens
 * of a protobuf body before it is decoded.
 */
import type { Context } from 'hono';
import { HttpError, readJson, tooLarge, zodMessage } from '../../http/index.ts';
import { decodeForwardBackward, encodeForwardBackwardOutput, encodeSampleResponse, PROTOBUF, ProtoBodyError } from '../../policy/tinker/proto-codec.ts';
import { countProto, forwardBackwardRequestShape, ProtoCountError } from '../../policy/tinker/proto-count.ts';
import {
  forwardBackwardOutputSchema,
  forwardBackwardSchema,
  inputTokens,
  sampleResponseSchema,
  WIRE_LIMITS,
  type ForwardBackwardRequest,
} from '../../policy/tinker/wire.ts';
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

/** What one forward_backward body may hold, besides what wire.ts's schema says. */
export interface BodyLimits {
  /** Bytes a protobuf body may be, after zstd (`--max-decoded-bytes`). */
  decodedBytes: number;
  /** Tokens of all datums together (`--tinker-max-call-tokens`). */
  callTokens: number;
}

/**
 * What the protobuf counter holds a request to: wire.ts's limits on the JSON shape (its modelInputSchema
 * takes 64 chunks), and a few tensors per datum (the SDK sends three or four).
 */
const REQUEST_SHAPE = forwardBackwardRequestShape({
  datums: WIRE_LIMITS.datums,
  chunks: 64,
  tokens: WIRE_LIMITS.tokens,
  tensors: 16,
  spans: WIRE_LIMITS.spans,
  idBytes: WIRE_LIMITS.sequenceId,
});

const tooManyTokens = (tokens: number, limit: number) =>
  tooLarge(
    `forward_backward's ${tokens.toLocaleString('en')} tokens`,
    limit,
    'tokens',
    '--tinker-max-call-tokens; send fewer datums per call',
    'too_many_tokens',
  );

/** The protobuf bytes of a body, unzstd'ed within the bound: 400 for a body that is not zstd, 413 past the bound. */
async function protobufBytes(c: Context, maxDecodedBytes: number): Promise<Uint8Array> {
  const bytes: Uint8Array = new Uint8Array(await c.req.arrayBuffer());
  if (mediaType(c.req.header('content-encoding')) !== 'zstd') {
    if (bytes.length > maxDecodedBytes) throw tooLarge('protobuf body', maxDecodedBytes, 'bytes', '--max-decoded-bytes', 'decoded_body_too_large');
    return bytes;
  }
  try {
    return await zstdDecompress(bytes, maxDecodedBytes);
  } catch (e) {
    if (!(e instanceof ZstdBodyError)) throw e;
    if (e.reason === 'not_zstd')
      throw new HttpError(400, `zstd body: ${e.message}; send the protobuf compressed with zstd, or without Content-Encoding`, 'invalid_body');
    throw new HttpError(
      e.reason === 'too_large' ? 413 : 400,
      `zstd body: ${e.message} (--max-decoded-bytes); send smaller forward_backward chunks`,
      'decoded_body_too_large',
    );
  }
}

/**
 * A forward_backward request, JSON or the SDK's protobuf (zstd or not), validated by wire.ts's schema. A
 * protobuf body's repeated fields and tokens are counted on the wire (proto-count.ts) before any message
 * is built, so a body of millions of empty elements is refused in milliseconds, not after gigabytes.
 */
export async function readForwardBackward(c: Context, limits: BodyLimits): Promise<ForwardBackwardRequest & { forward_only: boolean }> {
  if (mediaType(c.req.header('content-type')) !== PROTOBUF) {
    const body = await readJson(c, forwardBackwardSchema);
    const tokens = body.forward_backward_input.data.reduce((n, d) => n + inputTokens(d.model_input).length, 0);
    if (tokens > limits.callTokens) throw tooManyTokens(tokens, limits.callTokens);
    return { ...body, forward_only: false };
  }
  const bytes = await protobufBytes(c, limits.decodedBytes);
  let sums;
  try {
    sums = countProto(bytes, REQUEST_SHAPE);
  } catch (e) {
    if (e instanceof ProtoCountError) throw new HttpError(400, `protobuf forward_backward: ${e.message} (refused before decoding)`, 'invalid_body', e.field);
    throw e;
  }
  if ((sums.tokens ?? 0) > limits.callTokens) throw tooManyTokens(sums.tokens!, limits.callTokens);
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
