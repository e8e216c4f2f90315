/**
 * The answers' side of the protobuf counter (src/policy/tinker/proto-count.ts, the walk `serve --tinker`
 * also runs on requests): a sample or forward_backward result is counted against what the call asked
 * without building it, and bytes that are not a message (a cut varint, a length past the end, a group)
 * are refused as the engine's error instead of read past.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerBoundError, countForwardBackwardProto, countSampleProto } from '../../../src/policy/tinker/answer-bounds.ts';
import { encodeForwardBackwardOutput, encodeSampleResponse } from '../../../src/policy/tinker/proto-codec.ts';

const refused = (f: () => void, says: RegExp) => assert.throws(f, (e: Error) => e instanceof AnswerBoundError && says.test(e.message));

test('a real sample result passes for the sequences asked and is refused for fewer', () => {
  const bytes = encodeSampleResponse({
    sequences: [
      { tokens: [1, 2], logprobs: [-1, -2], stop_reason: 'stop' },
      { tokens: [3], logprobs: [-3], stop_reason: 'length' },
    ],
    prompt_cache_hit_tokens: 5,
  });
  countSampleProto(bytes, 2);
  refused(() => countSampleProto(bytes, 1), /sample result past what was asked: sequences/);
});

test('a real forward_backward result (one ArrayRecord for all datums) passes, and a record for no datum sent is refused', () => {
  const tensor = { data: [-0.5, -1.5], dtype: 'float32' as const, shape: [2] };
  const bytes = encodeForwardBackwardOutput({
    loss_fn_output_type: 'ArrayRecord',
    loss_fn_outputs: [{ logprobs: tensor }, { logprobs: tensor }],
    metrics: { loss: 1 },
  });
  countForwardBackwardProto(bytes, 2);
  refused(() => countForwardBackwardProto(bytes, 0), /forward_backward result past what was asked: loss_fn_outputs/);
});

test('a million empty sequences are refused at the first past the count, without an object each', () => {
  const bytes = new Uint8Array(2_000_000).map((_, i) => (i % 2 ? 0 : 0x0a));
  refused(() => countSampleProto(bytes, 4), /sequences\[4\]: more than 4 elements/);
});

test('bytes that are not a message are refused, naming what is wrong', () => {
  refused(() => countSampleProto(Uint8Array.of(0x0a, 0x05, 1, 2), 1), /runs past its message/);
  refused(() => countSampleProto(Uint8Array.of(0x20, 0xff), 1), /ends inside a varint/);
  refused(() => countSampleProto(Uint8Array.of(0x0b), 1), /wire type 3/);
  refused(() => countSampleProto(Uint8Array.of(0x00, 0x00), 1), /field number 0/);
  refused(() => countSampleProto(Uint8Array.of(0x0d, 1, 2), 1), /ends inside a fixed-width value/);
});
