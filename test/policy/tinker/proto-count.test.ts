/**
 * The protobuf field counter (src/policy/tinker/proto-count.ts) on bytes an engine could send: it
 * counts without building, and refuses bytes that are not a message (a cut varint, a length past the
 * end, a group, field number 0) instead of reading past them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countFields, fieldMessages, ProtoWireError } from '../../../src/policy/tinker/proto-count.ts';
import { encodeSampleResponse } from '../../../src/policy/tinker/proto-codec.ts';

test('counts each top-level field of a real message, and its sub-messages’ bytes', () => {
  const bytes = encodeSampleResponse({
    sequences: [
      { tokens: [1, 2], logprobs: [-1, -2], stop_reason: 'stop' },
      { tokens: [3], logprobs: [-3], stop_reason: 'length' },
    ],
    prompt_cache_hit_tokens: 5,
  });
  const counts = countFields(bytes);
  assert.equal(counts.get(1), 2, 'two SampledSequences');
  assert.equal(counts.get(4), 1, 'prompt_cache_hit_tokens');
  const sequences = fieldMessages(bytes, 1);
  assert.equal(sequences.length, 2);
  assert.equal(countFields(sequences[1]!).get(2), 1, 'the second sequence has its tokens field');
});

test('a million empty sub-messages are counted in one pass, without an object each', () => {
  const bytes = new Uint8Array(2_000_000).map((_, i) => (i % 2 ? 0 : 0x0a));
  assert.equal(countFields(bytes).get(1), 1_000_000);
});

test('bytes that are not a message are refused, naming what is wrong', () => {
  assert.throws(
    () => countFields(Uint8Array.of(0x0a, 0x05, 1, 2)),
    (e: Error) => e instanceof ProtoWireError && /field 1's 5 bytes run past the end/.test(e.message),
  );
  assert.throws(
    () => countFields(Uint8Array.of(0x08, 0xff)),
    (e: Error) => e instanceof ProtoWireError && /varint at byte 1 is cut off/.test(e.message),
  );
  assert.throws(
    () => countFields(Uint8Array.of(0x0b)),
    (e: Error) => e instanceof ProtoWireError && /wire type 3 \(groups are not taken\)/.test(e.message),
  );
  assert.throws(
    () => countFields(Uint8Array.of(0x00, 0x00)),
    (e: Error) => e instanceof ProtoWireError && /field number 0/.test(e.message),
  );
  assert.throws(
    () => countFields(Uint8Array.of(0x0d, 1, 2)),
    (e: Error) => e instanceof ProtoWireError && /fixed-width value runs past the end/.test(e.message),
  );
});
