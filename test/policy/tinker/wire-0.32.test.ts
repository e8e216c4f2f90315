/**
 * SDK 0.32.0's wire (test/data/tinker-sdk/wire-0.32.json, written from the SDK's source and schema):
 * datum provenance spans in the protobuf forward_backward, loss_fn_config_v2, and the asample future's
 * sample_sequence_ids. The codec is checked against bytes it did not write; the server's counter and
 * checks against the same request; serve --tinker itself in policy.test.ts ('a run speaks the SDK wire').
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { AnswerBoundError, sampleSequenceIds } from '../../../src/policy/tinker/answer-bounds.ts';
import { ForwardBackwardRequestSchema } from '../../../src/policy/tinker/proto/tinker_public_pb.ts';
import { decodeForwardBackward, encodeForwardBackward, ProtoBodyError } from '../../../src/policy/tinker/proto-codec.ts';
import { countProto, forwardBackwardRequestShape, ProtoCountError } from '../../../src/policy/tinker/proto-count.ts';
import { datumProvenance, provenanceProblem, sequenceProvenance } from '../../../src/policy/tinker/provenance.ts';
import { datumSchema, SDK_WIRE_VERSION, WIRE_LIMITS, type Datum, type ForwardBackwardRequest } from '../../../src/policy/tinker/wire.ts';

const v = JSON.parse(readFileSync(new URL('../../data/tinker-sdk/wire-0.32.json', import.meta.url), 'utf8'));
const vector = v.datum_with_provenance;
const datum = datumSchema.parse(vector.json) as Datum;
const request: ForwardBackwardRequest = {
  model_id: vector.request.model_id,
  seq_id: vector.request.seq_id,
  forward_backward_input: { data: [datum], loss_fn: vector.request.loss_fn, loss_fn_config: vector.request.loss_fn_config },
};
const shape = forwardBackwardRequestShape({
  datums: 4096,
  chunks: 64,
  tokens: 1 << 17,
  tensors: 16,
  spans: WIRE_LIMITS.spans,
  idBytes: WIRE_LIMITS.sequenceId,
});

test('the client names the wire of 0.32.0', () => {
  assert.equal(SDK_WIRE_VERSION, v.sdk_version);
});

test('a trajectory’s provenance: prompt and observation runs name the next sample’s request, sampled runs their own sequence, cut to input and targets', () => {
  const spans = sequenceProvenance(vector.turn_of_token, vector.sequence_ids);
  assert.deepEqual(datumProvenance(spans, vector.sequence.length), {
    model_input_spans: vector.json.model_input_spans,
    loss_fn_input_spans: vector.json.loss_fn_input_spans,
  });
  // A turn without the engine's id (an engine of an older SDK) and a token after the last sample: no provenance, not a wrong one.
  assert.equal(sequenceProvenance(vector.turn_of_token, [vector.sequence_ids[0]]), undefined);
  assert.equal(sequenceProvenance([...vector.turn_of_token, -1], vector.sequence_ids), undefined);
  assert.equal(provenanceProblem(datum, 7, 7), undefined);
});

test('the SDK’s protobuf bytes decode to the vector (spans, and the loss’s numbers from loss_fn_config_v2), and ours carry the same', () => {
  const bytes = Buffer.from(vector.forward_backward_protobuf_hex, 'hex');
  const decoded = decodeForwardBackward(new Uint8Array(bytes));
  assert.deepEqual(datumSchema.parse(decoded.forward_backward_input.data[0]), datum);
  assert.deepEqual(decoded.forward_backward_input.loss_fn_config, vector.request.loss_fn_config);
  const ours = encodeForwardBackward(request);
  assert.deepEqual(decodeForwardBackward(ours), { ...decoded, forward_only: false });
  // Written as the SDK writes it: numbers in the legacy map and in v2.
  const m = fromBinary(ForwardBackwardRequestSchema, ours);
  assert.deepEqual(Object.keys(m.lossFnConfigV2).sort(), ['clip_high_threshold', 'clip_low_threshold']);
  assert.equal(m.lossFnConfigV2.clip_high_threshold!.value.value, 1.2);
  assert.deepEqual(countProto(bytes, shape), { tokens: 7 });
});

test('a text value in v2 is refused naming its key; a list past the bound is refused before decoding', () => {
  const m = fromBinary(ForwardBackwardRequestSchema, encodeForwardBackward(request));
  m.lossFnConfigV2.clip_low_threshold = { ...m.lossFnConfigV2.clip_low_threshold!, value: { case: 'text', value: 'x' } };
  const text = toBinary(ForwardBackwardRequestSchema, m);
  assert.throws(
    () => decodeForwardBackward(text),
    (e: Error) => e instanceof ProtoBodyError && /loss_fn_config_v2\.clip_low_threshold: a text value/.test(e.message),
  );
  const many = encodeForwardBackward({
    ...request,
    forward_backward_input: {
      ...request.forward_backward_input,
      data: [{ ...datum, model_input_spans: Array.from({ length: WIRE_LIMITS.spans + 1 }, () => datum.model_input_spans![0]!) }],
    },
  });
  assert.throws(
    () => countProto(many, shape),
    (e: Error) => e instanceof ProtoCountError && e.field === `data[0].model_input_spans[${WIRE_LIMITS.spans}]`,
  );
});

test('spans that do not pair or do not tile are refused naming why', () => {
  for (const r of v.datums_refused) {
    const d: Datum = { ...datum, ...(r.model_input_spans ? { model_input_spans: r.model_input_spans } : {}) };
    if (r.drop) delete (d as Record<string, unknown>)[r.drop];
    assert.match(provenanceProblem(d, 7, 7) ?? '', new RegExp(r.message), r.why);
  }
  assert.equal(datumSchema.safeParse({ ...vector.json, model_input_spans: [{ ...vector.json.model_input_spans[0], length: 0 }] }).success, false);
  assert.equal(
    datumSchema.safeParse({ ...vector.json, model_input_spans: [{ ...vector.json.model_input_spans[0], sequence_id: 'x'.repeat(257) }] }).success,
    false,
  );
});

test('an asample future’s sequence ids are taken when there is one per sample, distinct; an engine that sends none gives none', () => {
  assert.deepEqual(sampleSequenceIds(v.asample_future.future, v.asample_future.num_samples), v.asample_future.future.sample_sequence_ids);
  assert.equal(sampleSequenceIds({ request_id: 'req-f' }, 2), undefined);
  for (const r of v.asample_future_refused) assert.throws(() => sampleSequenceIds(r.future, r.num_samples), AnswerBoundError, r.why);
});
