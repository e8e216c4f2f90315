/**
 * How the Tinker client sends `forward_backward` to one engine, and reads results:
 *
 *  - The engine's client config (`POST /api/v1/client/config`, what the official SDK asks before
 *    anything else) decides, once per client: an answer means the engine serves the current SDK, which
 *    sends forward_backward as protobuf (`application/x-protobuf`), zstd-compressed when the answer says
 *    `proto_compress_fwdbwd: true` (src/tinker/resources/training.py). An answer with
 *    `proto_write_fwdbwd: false` (the flag older SDKs read before writing protobuf) and an engine
 *    without the endpoint (404: it predates the protobuf wire) get JSON.
 *  - An engine that refuses the protobuf body anyway (415, or 422 from a JSON-only FastAPI server)
 *    gets the same chunk again as JSON, and JSON from then on (remembered for the client's life).
 *  - Samples: with `sample_use_retrieve_futures: true` they go through sampling sessions, awaited by one
 *    `retrieve_futures` long-poll per session (session-futures.ts).
 *  - Results: `retrieve_future` for a sample or a forward_backward asks for protobuf
 *    (`Accept: application/x-protobuf`, as the SDK does); an engine that answers JSON is read as JSON.
 */
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackward, PROTOBUF } from './proto-codec.ts';
import { countForwardBackwardProto, countSampleProto } from './answer-bounds.ts';
import type { ForwardBackwardRequest } from './wire.ts';
import { zstdCompress } from './zstd.ts';

type Json = Record<string, unknown>;
export type FwdBwdEncoding = 'json' | 'protobuf' | 'protobuf+zstd';
/** The results that have a protobuf form, with what the call asked (the most repeated elements the answer may hold). */
export type ProtoResult = { kind: 'sample'; numSamples: number } | { kind: 'forward_backward'; datums: number };

/** The statuses with which an engine says it cannot read a protobuf body. */
const REFUSES_BODY = new Set([415, 422]);

export class WireChoice {
  private config?: Promise<Json | undefined>;
  /** Set when the engine refused a protobuf body: JSON from then on. */
  private jsonOnly = false;

  /** `askConfig` posts the client config request: its answer, or undefined when the engine has no such endpoint (404). */
  constructor(private readonly askConfig: () => Promise<Json | undefined>) {}

  /** The engine's client config, asked once (a failed ask is asked again next time). */
  private flags(): Promise<Json | undefined> {
    this.config ??= this.askConfig().catch((e: unknown) => {
      this.config = undefined;
      throw e;
    });
    return this.config;
  }

  /** The encoding for the next forward_backward. */
  async encoding(): Promise<FwdBwdEncoding> {
    const config = await this.flags();
    if (this.jsonOnly || config === undefined || config.proto_write_fwdbwd === false) return 'json';
    return config.proto_compress_fwdbwd === true ? 'protobuf+zstd' : 'protobuf';
  }

  /**
   * Whether samples go through a sampling session and are awaited with one `retrieve_futures` long-poll
   * per session (`sample_use_retrieve_futures: true`, as the SDK reads it), rather than a
   * `retrieve_future` poll loop per sample.
   */
  async samplesBySession(): Promise<boolean> {
    return (await this.flags())?.sample_use_retrieve_futures === true;
  }

  /** Whether an HTTP status answering a protobuf body means "send JSON": then JSON is remembered. */
  refused(encoding: FwdBwdEncoding, status: number): boolean {
    if (encoding === 'json' || !REFUSES_BODY.has(status)) return false;
    this.jsonOnly = true;
    return true;
  }

  /** The body and its headers in `encoding`. */
  async body(request: ForwardBackwardRequest, encoding: FwdBwdEncoding): Promise<{ body: string | Uint8Array; headers: Record<string, string> }> {
    if (encoding === 'json') return { body: JSON.stringify(withoutProvenance(request)), headers: { 'content-type': 'application/json' } };
    const bytes = encodeForwardBackward(request);
    if (encoding === 'protobuf') return { body: bytes, headers: { 'content-type': PROTOBUF } };
    return { body: await zstdCompress(bytes), headers: { 'content-type': PROTOBUF, 'content-encoding': 'zstd' } };
  }
}

/**
 * The request as the SDK's JSON wire has it: its JSON Datum has no provenance (the SDK sends spans in
 * protobuf only), and an engine that validates strictly would refuse the fields.
 */
function withoutProvenance(request: ForwardBackwardRequest): ForwardBackwardRequest {
  const data = request.forward_backward_input.data.map(({ model_input_spans: _a, loss_fn_input_spans: _b, ...d }) => d);
  return { ...request, forward_backward_input: { ...request.forward_backward_input, data } };
}

/** A protobuf result in the JSON shape wire.ts's schemas validate; its repeated fields are counted against what was asked first. */
export function decodeResult(expected: ProtoResult, bytes: Uint8Array): Json {
  if (expected.kind === 'sample') {
    countSampleProto(bytes, expected.numSamples);
    return decodeSampleResponse(bytes) as unknown as Json;
  }
  countForwardBackwardProto(bytes, expected.datums);
  return decodeForwardBackwardOutput(bytes, expected.datums) as unknown as Json;
}
