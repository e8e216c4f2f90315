/**
 * Counting a protobuf body before it is decoded. A protobuf decoder (protobuf-es here) builds one object
 * per element of a repeated field as it reads, and a schema's limits (4,096 datums, 64 chunks) are checked
 * only on what it built: a 5.7 KB zstd body of 33.5 M empty `Datum`s (two bytes each) decodes to 64 MiB
 * and to tens of millions of objects, gigabytes of heap, before any limit is seen.
 *
 * This walks the wire format itself (tags and lengths, no objects) against a description of the message
 * and refuses, at the first element past a limit, with the field's path: each repeated field's elements
 * per message, the bytes of a bytes field, unknown fields per message, and every element of the body
 * together. It also sums the bytes of chosen fields (the tokens a request carries) for the caller's bound.
 * Both ends of the Tinker wire can use it: the server on a request, the client on an answer.
 */

/** One field of a message as the counter sees it. */
export interface WireField {
  name: string;
  /** Most occurrences in one message: a repeated field's elements, a map's entries (1 for a singular field). */
  max: number;
  /** The field's message type (a map's entry type for a map), walked in turn. */
  message?: WireMessage;
  /** A packed repeated varint field: its elements are the varints inside one length-delimited run. */
  packedVarints?: boolean;
  /** Most bytes of a bytes field. */
  maxBytes?: number;
  /** Adds this field's bytes ÷ width to the walk's sum of that name (tokens: 4 bytes each). */
  sum?: { name: string; width: number };
}

export interface WireMessage {
  fields: Readonly<Record<number, WireField>>;
}

/** A body that is not protobuf, or holds more than the description allows; `field` is the path of the field refused (`data[0].model_input[64]`). */
export class ProtoCountError extends Error {
  override name = 'ProtoCountError';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export interface CountLimits {
  /** Elements of the whole body: messages, repeated and packed elements, unknown fields. */
  maxElements: number;
  /** Unknown fields one message may carry (a newer peer's additions are kept by the decoder as objects too). */
  maxUnknownPerMessage: number;
}

export const DEFAULT_COUNT_LIMITS: CountLimits = { maxElements: 1 << 18, maxUnknownPerMessage: 16 };

interface Walk {
  bytes: Uint8Array;
  pos: number;
  elements: number;
  limits: CountLimits;
  sums: Record<string, number>;
}

function varint(w: Walk, end: number, where: () => string): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (w.pos >= end) throw new ProtoCountError('the body ends inside a varint', where() || 'the message');
    const b = w.bytes[w.pos++]!;
    // Past 2^53 the value is only compared with lengths and field numbers, which it then exceeds anyway.
    value += (b & 0x7f) * scale;
    scale *= 128;
    if (b < 0x80) return value;
  }
  throw new ProtoCountError('a varint longer than 10 bytes', where() || 'the message');
}

function walkMessage(w: Walk, end: number, message: WireMessage, where: () => string): void {
  const counts = new Map<number, number>();
  let unknown = 0;
  while (w.pos < end) {
    const tag = varint(w, end, where);
    const number = Math.floor(tag / 8);
    const type = tag % 8;
    if (number < 1 || number > 0x1fffffff) throw new ProtoCountError(`field number ${number} is not a protobuf field`, where() || 'the message');
    const field = message.fields[number];
    const count = (counts.get(number) ?? 0) + 1;
    counts.set(number, count);
    const here = () => {
      const outer = where();
      return `${outer ? `${outer}.` : ''}${field ? field.name : `#${number}`}${field && field.max > 1 ? `[${count - 1}]` : ''}`;
    };
    if (field) {
      if (count > field.max)
        throw new ProtoCountError(field.max === 1 ? 'sent more than once' : `more than ${field.max.toLocaleString('en')} elements`, here());
    } else if (++unknown > w.limits.maxUnknownPerMessage)
      throw new ProtoCountError(`more than ${w.limits.maxUnknownPerMessage} unknown fields in one message`, where() || 'the message');
    if (field?.message || !field) w.elements++;
    if (w.elements > w.limits.maxElements)
      throw new ProtoCountError(`more than ${w.limits.maxElements.toLocaleString('en')} elements in the whole body`, here());
    if (type === 0) varint(w, end, here);
    else if (type === 1 || type === 5) {
      w.pos += type === 1 ? 8 : 4;
      if (w.pos > end) throw new ProtoCountError('the body ends inside a fixed-width value', here());
    } else if (type === 2) {
      const length = varint(w, end, here);
      if (length > end - w.pos) throw new ProtoCountError(`a length of ${length.toLocaleString('en')} bytes runs past its message`, here());
      const stop = w.pos + length;
      if (field?.maxBytes !== undefined && length > field.maxBytes)
        throw new ProtoCountError(`${length.toLocaleString('en')} bytes, more than ${field.maxBytes.toLocaleString('en')}`, here());
      if (field?.sum) w.sums[field.sum.name] = (w.sums[field.sum.name] ?? 0) + length / field.sum.width;
      if (field?.message) walkMessage(w, stop, field.message, here);
      else if (field?.packedVarints) {
        let elements = 0;
        for (let i = w.pos; i < stop; i++) if (w.bytes[i]! < 0x80) elements++;
        // A packed run holds `elements` values, not the one occurrence counted above.
        const total = count - 1 + elements;
        counts.set(number, total);
        if (total > field.max) throw new ProtoCountError(`more than ${field.max} elements`, here());
        w.elements += elements;
      }
      w.pos = stop;
    } else throw new ProtoCountError(`wire type ${type} (groups and unknown types are not taken)`, here());
  }
}

/**
 * Walks `bytes` as a message of `message`'s description and answers the sums of its `sum` fields; throws
 * ProtoCountError, naming the field, at the first thing past a limit or a body that is not protobuf.
 */
export function countProto(bytes: Uint8Array, message: WireMessage, limits: CountLimits = DEFAULT_COUNT_LIMITS): Record<string, number> {
  const w: Walk = { bytes, pos: 0, elements: 0, limits, sums: {} };
  walkMessage(w, bytes.length, message, () => '');
  return w.sums;
}

const bytesField = (name: string, extra: Partial<WireField> = {}): WireField => ({ name, max: 1, ...extra });
const scalar = (name: string): WireField => ({ name, max: 1 });
const mapOf = (name: string, max: number, value: WireField): WireField => ({ name, max, message: { fields: { 1: scalar('key'), 2: value } } });

/** What a `ForwardBackwardRequest` may hold (tinker_public.proto), with wire.ts's limits on the JSON shape. */
export function forwardBackwardRequestShape(limits: {
  datums: number;
  chunks: number;
  tokens: number;
  tensors: number;
  spans: number;
  idBytes: number;
}): WireMessage {
  const tensor: WireMessage = {
    fields: {
      1: bytesField('dense', { maxBytes: limits.tokens * 8 }),
      2: { name: 'sparse_csr', max: 1, message: { fields: { 1: bytesField('values'), 2: bytesField('crow_indices'), 3: bytesField('col_indices') } } },
      3: scalar('dtype'),
      4: { name: 'shape', max: 8, packedVarints: true },
    },
  };
  const chunk: WireMessage = {
    fields: {
      1: { name: 'encoded_text', max: 1, message: { fields: { 1: bytesField('tokens', { maxBytes: limits.tokens * 4, sum: { name: 'tokens', width: 4 } }) } } },
      2: { name: 'image', max: 1, message: { fields: { 1: bytesField('data'), 2: scalar('format'), 3: scalar('expected_tokens') } } },
      3: { name: 'dmel', max: 1, message: { fields: { 1: bytesField('dmel') } } },
    },
  };
  const run: WireMessage = { fields: { 1: bytesField('sequence_id', { maxBytes: limits.idBytes }), 2: scalar('offset'), 3: scalar('length') } };
  const span: WireMessage = { fields: { 1: { name: 'prompt_tokens', max: 1, message: run }, 2: { name: 'sampled_tokens', max: 1, message: run } } };
  const datum: WireMessage = {
    fields: {
      1: { name: 'model_input', max: limits.chunks, message: chunk },
      2: mapOf('loss_fn_inputs', limits.tensors, { name: 'value', max: 1, message: tensor }),
      3: { name: 'model_input_spans', max: limits.spans, message: span },
      4: { name: 'loss_fn_input_spans', max: limits.spans, message: span },
    },
  };
  return {
    fields: {
      1: scalar('model_id'),
      2: scalar('seq_id'),
      3: { name: 'data', max: limits.datums, message: datum },
      4: scalar('loss_fn'),
      5: mapOf('loss_fn_config', 16, scalar('value')),
      6: scalar('forward_only'),
      7: mapOf('loss_fn_config_v2', 16, { name: 'value', max: 1, message: { fields: { 1: scalar('number'), 2: bytesField('text', { maxBytes: 1024 }) } } }),
    },
  };
}

const topk: WireMessage = { fields: { 1: bytesField('token_ids'), 2: bytesField('logprobs'), 3: scalar('k'), 4: scalar('length') } };
const tensorShape: WireMessage = {
  fields: {
    1: bytesField('dense'),
    2: { name: 'sparse_csr', max: 1, message: { fields: { 1: bytesField('values'), 2: bytesField('crow_indices'), 3: bytesField('col_indices') } } },
    3: scalar('dtype'),
    4: { name: 'shape', max: 8, packedVarints: true },
  },
};

/** What a `SampleResponse` may hold for a request of `numSamples` sequences (tinker_public.proto). */
export function sampleResponseShape(numSamples: number): WireMessage {
  return {
    fields: {
      1: {
        name: 'sequences',
        max: numSamples,
        message: {
          fields: { 1: scalar('stop_reason'), 2: bytesField('tokens'), 3: bytesField('logprobs'), 4: { name: 'topk_sampled_logprobs', max: 1, message: topk } },
        },
      },
      2: bytesField('prompt_logprobs'),
      3: { name: 'topk_prompt_logprobs', max: 1, message: topk },
      4: scalar('prompt_cache_hit_tokens'),
      // What SDK 0.32 may ask for besides (the client never does): one tensor, or two, each walked as a message.
      5: { name: 'target_prompt_logprobs', max: 1, message: tensorShape },
      6: {
        name: 'prompt_alt_tokens',
        max: 1,
        message: { fields: { 1: { name: 'tokens', max: 1, message: tensorShape }, 2: { name: 'logprobs', max: 1, message: tensorShape } } },
      },
    },
  };
}

/**
 * What a `ForwardBackwardOutput` may hold for `datums` datums sent: a record each at most, `fields`
 * per-token outputs in a record, `metrics` metrics (their tensors' bytes are checked once decoded).
 */
export function forwardBackwardOutputShape(limits: { datums: number; fields: number; metrics: number }): WireMessage {
  const record: WireMessage = { fields: { 1: scalar('type_tag'), 2: mapOf('fields', limits.fields, scalar('value')), 3: scalar('num_datums') } };
  return {
    fields: {
      1: scalar('loss_fn_output_type'),
      2: { name: 'loss_fn_outputs', max: limits.datums, message: record },
      3: mapOf('metrics', limits.metrics, scalar('value')),
    },
  };
}
