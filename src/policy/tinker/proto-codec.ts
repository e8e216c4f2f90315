/**
 * The SDK's protobuf wire (proto/tinker_public_pb.ts, generated from the SDK's schema) in and out of the
 * JSON shapes of wire.ts, so both ends keep one validated shape whichever encoding crossed the wire:
 *  - `ForwardBackwardRequest`: the client encodes it (the SDK sends forward_backward so), the server
 *    decodes it and then validates the JSON shape with wire.ts's schema; a Datum's provenance spans
 *    (provenance.ts) travel in this encoding only, as the SDK sends them;
 *  - `ForwardBackwardOutput` and `SampleResponse`: what `retrieve_future` answers a client that asks
 *    for `Accept: application/x-protobuf`, as the SDK does for these two results.
 * Arrays travel as little-endian bytes: tokens int32, float tensors float32, int tensors int64;
 * a `BatchedTensor` is every datum's values end to end with n+1 int64 byte offsets
 * (src/tinker/proto/{request,response}_conv.py in the SDK).
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  ArrayRecordSchema,
  BatchedTensorSchema,
  DType,
  ForwardBackwardOutputSchema,
  ForwardBackwardRequestSchema,
  SampleResponseSchema,
  StopReason,
  type ForwardBackwardRequest as ProtoForwardBackwardRequest,
  type ProvenanceSpan as ProtoSpan,
  type Tensor,
} from './proto/tinker_public_pb.ts';
import type { ForwardBackwardOutput, ForwardBackwardRequest, ProvenanceSpan, SampleResponse, TensorData } from './wire.ts';

/** The media type of the SDK's protobuf bodies. */
export const PROTOBUF = 'application/x-protobuf';

/** A protobuf body that is not a message of the expected type, or holds what this side does not take. */
export class ProtoBodyError extends Error {
  override name = 'ProtoBodyError';
}

const WIDTH = { int32: 4, float32: 4, int64: 8 } as const;
type Kind = keyof typeof WIDTH;

function pack(values: readonly number[], kind: Kind): Uint8Array {
  const out = new Uint8Array(values.length * WIDTH[kind]);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (kind === 'int32') view.setInt32(i * 4, v, true);
    else if (kind === 'float32') view.setFloat32(i * 4, v, true);
    else view.setBigInt64(i * 8, BigInt(Math.trunc(v)), true);
  });
  return out;
}

function unpack(bytes: Uint8Array, kind: Kind, where: string): number[] {
  const w = WIDTH[kind];
  if (bytes.length % w !== 0) throw new ProtoBodyError(`${where}: ${bytes.length} bytes is not a whole number of ${kind} values`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.length / w);
  for (let i = 0; i < out.length; i++)
    out[i] = kind === 'int32' ? view.getInt32(i * 4, true) : kind === 'float32' ? view.getFloat32(i * 4, true) : Number(view.getBigInt64(i * 8, true));
  return out;
}

const dtypeOf = (t: TensorData): DType => (t.dtype === 'int64' ? DType.DTYPE_INT64 : DType.DTYPE_FLOAT32);

/** The request as the SDK encodes it (`forward_backward_request_to_proto`). */
export function encodeForwardBackward(request: ForwardBackwardRequest): Uint8Array {
  const input = request.forward_backward_input;
  const message = create(ForwardBackwardRequestSchema, {
    modelId: request.model_id,
    seqId: request.seq_id ?? 0,
    lossFn: input.loss_fn,
    lossFnConfig: { ...(input.loss_fn_config ?? {}) },
    // As SDK 0.26+ writes it: every number in the legacy map and in loss_fn_config_v2 (an engine prefers v2).
    lossFnConfigV2: Object.fromEntries(Object.entries(input.loss_fn_config ?? {}).map(([k, v]) => [k, { value: { case: 'number' as const, value: v } }])),
    data: input.data.map((d) => ({
      modelInputSpans: (d.model_input_spans ?? []).map(spanMessage),
      lossFnInputSpans: (d.loss_fn_input_spans ?? []).map(spanMessage),
      modelInput: d.model_input.chunks.map((c) => ({ chunk: { case: 'encodedText' as const, value: { tokens: pack(c.tokens, 'int32') } } })),
      lossFnInputs: Object.fromEntries(
        Object.entries(d.loss_fn_inputs).map(([name, t]) => [
          name,
          {
            dtype: dtypeOf(t),
            shape: (t.shape ?? [t.data.length]).map((n) => BigInt(n)),
            encoding: { case: 'dense' as const, value: pack(t.data, t.dtype) },
          },
        ]),
      ),
    })),
  });
  return toBinary(ForwardBackwardRequestSchema, message);
}

function spanMessage(s: ProvenanceSpan) {
  const run = { sequenceId: s.sequence_id, offset: BigInt(s.offset), length: BigInt(s.length) };
  return { span: s.type === 'prompt_tokens' ? { case: 'promptTokens' as const, value: run } : { case: 'sampledTokens' as const, value: run } };
}

function spanJson(s: ProtoSpan, where: string): ProvenanceSpan {
  if (s.span.case === undefined) throw new ProtoBodyError(`${where}: a span with neither prompt_tokens nor sampled_tokens`);
  const run = s.span.value;
  return {
    type: s.span.case === 'promptTokens' ? 'prompt_tokens' : 'sampled_tokens',
    sequence_id: run.sequenceId,
    offset: Number(run.offset),
    length: Number(run.length),
  };
}

/** A protobuf Datum's span list: absent when it has none (the SDK writes none for a Datum without provenance). */
const spansJson = (spans: readonly ProtoSpan[], where: string): ProvenanceSpan[] | null =>
  spans.length ? spans.map((s, k) => spanJson(s, `${where}[${k}]`)) : null;

/** The loss's numbers: loss_fn_config_v2 when sent (SDK 0.26+; the legacy map only mirrors its numbers), else the legacy map. */
function lossConfig(m: ProtoForwardBackwardRequest): Record<string, number> | null {
  const v2 = Object.entries(m.lossFnConfigV2);
  if (!v2.length) return Object.keys(m.lossFnConfig).length ? { ...m.lossFnConfig } : null;
  return Object.fromEntries(
    v2.map(([k, v]) => {
      if (v.value.case !== 'number')
        throw new ProtoBodyError(`loss_fn_config_v2.${k}: ${v.value.case === 'text' ? 'a text value' : 'no value'}; the losses here take numbers`);
      return [k, v.value.value];
    }),
  );
}

function tensorJson(t: Tensor, where: string): TensorData {
  if (t.encoding.case !== 'dense') throw new ProtoBodyError(`${where}: only dense tensors are taken here (send the values, not sparse_csr)`);
  const dtype = t.dtype === DType.DTYPE_INT64 ? 'int64' : t.dtype === DType.DTYPE_FLOAT32 ? 'float32' : undefined;
  if (!dtype) throw new ProtoBodyError(`${where}.dtype: ${DType[t.dtype] ?? t.dtype}; the SDK sends float32 or int64`);
  return { data: unpack(t.encoding.value, dtype, where), dtype, shape: t.shape.map(Number) };
}

/**
 * The JSON shape (wire.ts's `forwardBackwardSchema`, still to be validated by the caller) of a protobuf
 * `ForwardBackwardRequest`; `forward_only` comes along for the caller to refuse or honour.
 */
export function decodeForwardBackward(bytes: Uint8Array): ForwardBackwardRequest & { forward_only: boolean } {
  let m;
  try {
    m = fromBinary(ForwardBackwardRequestSchema, bytes);
  } catch (e) {
    throw new ProtoBodyError(`not a ForwardBackwardRequest message (${(e as Error).message})`);
  }
  return {
    model_id: m.modelId,
    seq_id: m.seqId,
    forward_only: m.forwardOnly,
    forward_backward_input: {
      loss_fn: m.lossFn,
      loss_fn_config: lossConfig(m),
      data: m.data.map((d, i) => ({
        model_input: {
          chunks: d.modelInput.map((c, j) => {
            if (c.chunk.case !== 'encodedText')
              throw new ProtoBodyError(`data[${i}].model_input[${j}]: a ${c.chunk.case ?? 'empty'} chunk; this server takes token chunks (encoded_text) only`);
            return { type: 'encoded_text' as const, tokens: unpack(c.chunk.value.tokens, 'int32', `data[${i}].model_input[${j}].tokens`) };
          }),
        },
        loss_fn_inputs: Object.fromEntries(Object.entries(d.lossFnInputs).map(([k, t]) => [k, tensorJson(t, `data[${i}].loss_fn_inputs.${k}`)])),
        model_input_spans: spansJson(d.modelInputSpans, `data[${i}].model_input_spans`),
        loss_fn_input_spans: spansJson(d.lossFnInputSpans, `data[${i}].loss_fn_input_spans`),
      })),
    },
  };
}

/** A forward_backward result as the SDK's engine answers it: one ArrayRecord, each field every datum's values end to end. */
export function encodeForwardBackwardOutput(output: ForwardBackwardOutput): Uint8Array {
  const names = [...new Set(output.loss_fn_outputs.flatMap((o) => Object.keys(o)))];
  const fields = Object.fromEntries(
    names.map((name) => {
      const tensors = output.loss_fn_outputs.map((o, i) => {
        const t = o[name];
        // A field missing on one datum would shift every later datum's slice.
        if (!t) throw new ProtoBodyError(`loss_fn_outputs[${i}] has no ${name}`);
        return t;
      });
      const kind: Kind = tensors[0]!.dtype === 'int64' ? 'int64' : 'float32';
      const offsets = [0];
      for (const t of tensors) offsets.push(offsets.at(-1)! + t.data.length * WIDTH[kind]);
      return [
        name,
        create(BatchedTensorSchema, {
          data: pack(
            tensors.flatMap((t) => t.data),
            kind,
          ),
          offsets: pack(offsets, 'int64'),
          dtype: kind === 'int64' ? DType.DTYPE_INT64 : DType.DTYPE_FLOAT32,
          trailingShape: [],
        }),
      ];
    }),
  );
  return toBinary(
    ForwardBackwardOutputSchema,
    create(ForwardBackwardOutputSchema, {
      lossFnOutputType: output.loss_fn_output_type ?? 'ArrayRecord',
      lossFnOutputs: output.loss_fn_outputs.length ? [create(ArrayRecordSchema, { fields, numDatums: BigInt(output.loss_fn_outputs.length) })] : [],
      metrics: { ...output.metrics },
    }),
  );
}

/** A protobuf forward_backward result in the JSON shape (wire.ts's `forwardBackwardOutputSchema`, still to be validated). */
export function decodeForwardBackwardOutput(bytes: Uint8Array, maxDatums: number): ForwardBackwardOutput {
  let m;
  try {
    m = fromBinary(ForwardBackwardOutputSchema, bytes);
  } catch (e) {
    throw new ProtoBodyError(`not a ForwardBackwardOutput message (${(e as Error).message})`);
  }
  const outputs: Record<string, TensorData>[] = [];
  m.lossFnOutputs.forEach((record, r) => {
    const count = Number(record.numDatums);
    if (!(count >= 0 && outputs.length + count <= maxDatums))
      throw new ProtoBodyError(`loss_fn_outputs[${r}].num_datums: ${count}, more than ${maxDatums} datums`);
    const start = outputs.length;
    for (let i = 0; i < count; i++) outputs.push({});
    for (const [name, bt] of Object.entries(record.fields)) {
      const where = `loss_fn_outputs[${r}].fields.${name}`;
      const kind: Kind | undefined =
        bt.dtype === DType.DTYPE_FLOAT32 ? 'float32' : bt.dtype === DType.DTYPE_INT64 ? 'int64' : bt.dtype === DType.DTYPE_INT32 ? 'int32' : undefined;
      if (!kind) throw new ProtoBodyError(`${where}.dtype: ${DType[bt.dtype] ?? bt.dtype} is not taken here (float32, int64 or int32)`);
      const offsets = unpack(bt.offsets, 'int64', `${where}.offsets`);
      if (offsets.length !== count + 1) throw new ProtoBodyError(`${where}.offsets: ${offsets.length} offsets for ${count} datums`);
      for (let i = 0; i < count; i++) {
        const [a, b] = [offsets[i]!, offsets[i + 1]!];
        if (!(a >= 0 && a <= b && b <= bt.data.length))
          throw new ProtoBodyError(`${where}.offsets[${i}]: ${a}..${b} is outside the ${bt.data.length} data bytes`);
        const values = unpack(bt.data.subarray(a, b), kind, where);
        outputs[start + i]![name] = { data: values, dtype: kind === 'float32' ? 'float32' : 'int64', shape: [values.length, ...bt.trailingShape.map(Number)] };
      }
    }
  });
  return { loss_fn_output_type: m.lossFnOutputType.split(':').at(-1)!, loss_fn_outputs: outputs, metrics: { ...m.metrics } };
}

export function encodeSampleResponse(response: SampleResponse): Uint8Array {
  return toBinary(
    SampleResponseSchema,
    create(SampleResponseSchema, {
      promptCacheHitTokens: response.prompt_cache_hit_tokens ?? 0,
      sequences: response.sequences.map((s) => ({
        stopReason: s.stop_reason === 'length' ? StopReason.LENGTH : StopReason.STOP,
        tokens: pack(s.tokens, 'int32'),
        ...(s.logprobs ? { logprobs: pack(s.logprobs, 'float32') } : {}),
      })),
    }),
  );
}

/** A protobuf sample result in the JSON shape (wire.ts's `sampleResponseSchema`, still to be validated). */
export function decodeSampleResponse(bytes: Uint8Array): SampleResponse {
  let m;
  try {
    m = fromBinary(SampleResponseSchema, bytes);
  } catch (e) {
    throw new ProtoBodyError(`not a SampleResponse message (${(e as Error).message})`);
  }
  return {
    prompt_cache_hit_tokens: m.promptCacheHitTokens,
    sequences: m.sequences.map((s, i) => {
      if (s.stopReason !== StopReason.STOP && s.stopReason !== StopReason.LENGTH)
        throw new ProtoBodyError(`sequences[${i}].stop_reason: unknown value ${s.stopReason}`);
      return {
        tokens: unpack(s.tokens, 'int32', `sequences[${i}].tokens`),
        logprobs: s.logprobs === undefined ? null : unpack(s.logprobs, 'float32', `sequences[${i}].logprobs`),
        stop_reason: s.stopReason === StopReason.LENGTH ? ('length' as const) : ('stop' as const),
      };
    }),
  };
}
