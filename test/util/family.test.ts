import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineFamily, discriminatedSchema, UnknownNameError } from '../../src/util/family.ts';

const shape = (name: string) => ({ name, schema: z.strictObject({ kind: z.literal(name), n: z.number().default(1) }) });

test('a family registers entries once, finds them by name and names the known ones when a name is unknown', () => {
  const fruits = defineFamily('fruit', [shape('apple')]);
  fruits.register(shape('pear'));
  assert.deepEqual(fruits.names(), ['apple', 'pear']);
  assert.equal(fruits.get('pear').name, 'pear');
  assert.equal(fruits.has('plum'), false);
  assert.throws(
    () => fruits.get('plum'),
    (e: unknown) => e instanceof UnknownNameError && e.message === 'no fruit plum (known: apple, pear)',
  );
  assert.throws(() => fruits.register(shape('apple')), /fruit apple exists already/);
});

test('its discriminated schema accepts an entry registered after it was made, and names the known ones', () => {
  const fruits = defineFamily('fruit', [shape('apple')]);
  const schema = discriminatedSchema(fruits, 'kind');
  fruits.register(shape('pear'));
  assert.deepEqual(schema.parse({ kind: 'apple' }), { kind: 'apple', n: 1 });
  assert.deepEqual(schema.parse({ kind: 'pear', n: 2 }), { kind: 'pear', n: 2 });
  assert.equal(schema.safeParse({ kind: 'plum' }).error?.issues[0]?.message, 'Invalid option: expected one of "apple"|"pear"');
});
