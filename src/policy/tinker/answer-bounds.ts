/**
 * What an engine may answer a call, derived from what the call asked: the bytes of its body, the
 * repeated fields of a protobuf answer (counted before it is decoded, proto-count.ts), and the values
 * trained on. A sample of n sequences of at most m tokens is a few kilobytes; a forward_backward result
 * holds a few numbers per token sent. A flat ceiling let a hostile or broken engine send hundreds of
 * megabytes (and, as protobuf, millions of objects) per call, and several calls at once each took it.
 */
import { countProto, forwardBackwardOutputShape, ProtoCountError, sampleResponseShape, type WireMessage } from './proto-count.ts';
import type { Datum, ForwardBackwardOutput, SampleRequest, SampleResponse } from './wire.ts';
import { sampleFutureSchema, WIRE_LIMITS } from './wire.ts';

/** An answer that is not what was asked (too large, too many, impossible values): the engine's error. */
export class AnswerBoundError extends Error {
  override name = 'AnswerBoundError';
}

/** An answer to a call that carries no per-token data (session, model, optim_step, weights' paths, config). */
export const SMALL_ANSWER_BYTES = 1024 * 1024;
/** get_server_capabilities: up to 4,096 models of names up to 512 characters (engine.ts's schema). */
export const CAPABILITIES_BYTES = 4 * 1024 * 1024;
/** What is read of an error status's body: it is cut to a line anyway. */
export const ERROR_BODY_BYTES = 64 * 1024;

/**
 * Room per value in the widest encoding, JSON: a token id (`151643,`) and a log-probability as Python
 * prints a float (`-0.12345678901234567,`) fit in 32 characters; a tensor or sequence's own keys, dtype
 * and shape in 256; fields the engine adds (metrics, a cache count, its types) in the fixed part.
 */
const BYTES_PER_VALUE = 32;
const BYTES_PER_ITEM = 256;
const FIXED_BYTES = 64 * 1024;
/** A forward_backward output's fields per datum that are counted room for (logprobs, elementwise_loss and the like). */
const OUTPUT_FIELDS = 4;
/** Metrics of one forward_backward result at most. */
const MAX_METRICS = 1024;
/**
 * How far above 0 a log-probability may be and still be a rounding of 0 (a float32 log-softmax of a
 * certain token): anything more is not a probability.
 */
export const LOGPROB_ROUNDING = 1e-3;

/** The bytes a sample answer may take: n sequences of at most max_tokens, each with its log-probabilities. */
export function sampleAnswerBytes(request: SampleRequest): number {
  const n = request.num_samples ?? 1;
  const m = request.sampling_params.max_tokens ?? WIRE_LIMITS.tokens;
  return FIXED_BYTES + n * (BYTES_PER_ITEM + 2 * m * BYTES_PER_VALUE);
}

/** The bytes a forward_backward answer may take: a few per-token fields for each datum sent. */
export function forwardBackwardAnswerBytes(data: readonly Datum[]): number {
  const tokens = data.reduce((n, d) => n + targets(d), 0);
  return FIXED_BYTES + data.length * OUTPUT_FIELDS * BYTES_PER_ITEM + tokens * OUTPUT_FIELDS * BYTES_PER_VALUE;
}

/** A datum's target count: the length of its per-token inputs (what the engine's per-token outputs must match). */
export const targets = (d: Datum): number => d.loss_fn_inputs.target_tokens?.data.length ?? d.model_input.chunks.reduce((n, c) => n + c.tokens.length, 0);

/** Refuses, before decoding, a protobuf SampleResponse with more sequences than asked. */
export function countSampleProto(bytes: Uint8Array, numSamples: number): void {
  counted(bytes, sampleResponseShape(numSamples), 'sample');
}

/** Refuses, before decoding, a protobuf ForwardBackwardOutput with more records, metrics or fields than the datums sent allow. */
export function countForwardBackwardProto(bytes: Uint8Array, datums: number): void {
  counted(bytes, forwardBackwardOutputShape({ datums, fields: OUTPUT_FIELDS * 4, metrics: MAX_METRICS }), 'forward_backward');
}

/** The wire walk of proto-count.ts (the server's counter of requests, here on answers); its refusal is the engine's error. */
function counted(bytes: Uint8Array, shape: WireMessage, call: string): void {
  try {
    countProto(bytes, shape);
  } catch (e) {
    if (e instanceof ProtoCountError) throw new AnswerBoundError(`a protobuf ${call} result past what was asked: ${e.message}`);
    throw e;
  }
}

function checkLogprobs(values: readonly number[], where: string): void {
  const bad = values.findIndex((v) => !Number.isFinite(v) || v > LOGPROB_ROUNDING);
  if (bad >= 0) throw new AnswerBoundError(`${where}[${bad}] is ${values[bad]}, not a log-probability (finite, at most 0)`);
}

/** Refuses a sample result that is not what was asked: another number of sequences, longer ones, impossible log-probabilities. */
export function checkSample(request: SampleRequest, response: SampleResponse): void {
  const n = request.num_samples ?? 1;
  if (response.sequences.length !== n) throw new AnswerBoundError(`${response.sequences.length} sequences for num_samples ${n}`);
  const m = request.sampling_params.max_tokens ?? WIRE_LIMITS.tokens;
  response.sequences.forEach((s, i) => {
    if (s.tokens.length > m) throw new AnswerBoundError(`sequences[${i}] has ${s.tokens.length} tokens for max_tokens ${m}`);
    if (s.logprobs && s.logprobs.length !== s.tokens.length)
      throw new AnswerBoundError(`sequences[${i}] has ${s.logprobs.length} log-probabilities for ${s.tokens.length} tokens`);
    if (s.logprobs) checkLogprobs(s.logprobs, `sequences[${i}].logprobs`);
  });
}

/**
 * The sequence ids an `asample` future names (SDK 0.26+), one per sample asked and each distinct; an
 * engine that names none (one of an older SDK's wire) answers undefined.
 */
export function sampleSequenceIds(future: Record<string, unknown>, numSamples: number): string[] | undefined {
  const parsed = sampleFutureSchema.safeParse(future);
  if (!parsed.success) throw new AnswerBoundError(`the future's sample_sequence_ids: ${parsed.error.issues[0]!.message}`);
  const ids = parsed.data.sample_sequence_ids;
  if (ids == null) return undefined;
  if (ids.length !== numSamples) throw new AnswerBoundError(`${ids.length} sample_sequence_ids for num_samples ${numSamples}`);
  if (new Set(ids).size !== ids.length) throw new AnswerBoundError('sample_sequence_ids name one sequence twice');
  return ids;
}

/** Refuses a forward_backward result whose log-probabilities do not match the datums sent, one per target token, each a log-probability. */
export function checkForwardBackward(data: readonly Datum[], output: ForwardBackwardOutput): void {
  if (output.loss_fn_outputs.length !== data.length) throw new AnswerBoundError(`${output.loss_fn_outputs.length} outputs for ${data.length} datums`);
  output.loss_fn_outputs.forEach((o, i) => {
    const logprobs = o.logprobs?.data;
    if (!logprobs) return;
    const want = targets(data[i]!);
    if (logprobs.length !== want)
      throw new AnswerBoundError(`loss_fn_outputs[${i}].logprobs has ${logprobs.length} values for a datum of ${want} target tokens`);
    checkLogprobs(logprobs, `loss_fn_outputs[${i}].logprobs`);
  });
}
