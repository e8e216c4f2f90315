import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GgufError, meta, modelFromGguf, modelToGguf, readGguf, writeGguf } from '../../src/tinylm/index.ts';
import { fixture } from './fixtures.ts';

test('writeGguf → readGguf round-trips every metadata type and F32 tensors', () => {
  const md = {
    'general.architecture': meta.str('llama'),
    'a.u32': meta.u32(4_000_000_000),
    'a.i32': meta.i32(-7),
    'a.f32': meta.f32(0.5),
    'a.bool': meta.bool(true),
    'a.u64': { type: 'u64', value: 12345678901n } as const,
    'a.f64': { type: 'f64', value: Math.PI } as const,
    'a.strings': meta.strings(['▁x', '<0x0A>', 'é']),
    'a.f32s': meta.f32s([1.5, -2]),
  };
  const tensors = [
    { name: 't.a', dims: [3, 2], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
    { name: 't.b', dims: [5], data: Float32Array.from([0.1, 0.2, 0.3, 0.4, 0.5]) },
  ];
  const bytes = writeGguf(md, tensors);
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'GGUF');
  const f = readGguf(bytes);
  assert.equal(f.version, 3);
  assert.deepEqual([...f.metadata.keys()], Object.keys(md));
  for (const [k, v] of Object.entries(md)) assert.deepEqual(f.metadata.get(k), k === 'a.f32s' ? v : v, k);
  assert.deepEqual(
    f.tensors.map((t) => [t.name, t.dims, [...t.data]]),
    tensors.map((t) => [t.name, t.dims, [...t.data]]),
  );
});

test('readGguf names what is wrong with a bad file', () => {
  const bytes = writeGguf({ k: meta.u32(1) }, [{ name: 'w', dims: [4], data: new Float32Array(4) }]);
  assert.throws(
    () => readGguf(bytes.subarray(0, bytes.length - 40), 'cut.gguf'),
    (e: unknown) => e instanceof GgufError && /cut\.gguf/.test(e.message),
  );
  const bad = bytes.slice();
  bad[0] = 0;
  assert.throws(() => readGguf(bad), /not a GGUF file/);
  assert.throws(() => writeGguf({}, [{ name: 'w', dims: [3], data: new Float32Array(4) }]), /dims \[3\] hold 3 floats but data has 4/);
});

test('modelToGguf → modelFromGguf gives back the same config, vocabulary and weights', () => {
  const { model } = fixture();
  const back = modelFromGguf(modelToGguf(model));
  assert.deepEqual(back.config, { ...model.config, eps: Math.fround(model.config.eps) }, 'eps is stored as f32');
  assert.deepEqual(back.vocab.pieces, model.vocab.pieces);
  assert.deepEqual(back.vocab.types, model.vocab.types);
  assert.deepEqual(
    back.vocab.scores,
    model.vocab.scores.map((s) => Math.fround(s)),
  );
  assert.deepEqual(back.weights.embed, model.weights.embed);
  assert.deepEqual(back.weights.layers[1]!.down, model.weights.layers[1]!.down);
  assert.deepEqual(back.weights.output, model.weights.output);
});
