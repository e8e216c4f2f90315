/**
 * Counts the fields of a protobuf message by walking its wire format, without building it. A decoder
 * (protobuf-es) makes one object per repeated element before any schema limit is checked, so a few
 * megabytes of empty `SampledSequence`s become millions of objects; counting first lets a reader refuse
 * such a body for the price of one pass over its bytes and no allocation per field.
 *
 * Wire types (protobuf encoding spec): 0 varint, 1 fixed 8 bytes, 2 length-delimited, 5 fixed 4
 * bytes; 3 and 4 (groups) are not used by the Tinker schema and are refused.
 */

/** Bytes that are not a protobuf message (a cut varint, a length past the end, a group). */
export class ProtoWireError extends Error {
  override name = 'ProtoWireError';
}

/** One field occurrence: its number and, for a length-delimited one, where its bytes lie. */
interface Field {
  number: number;
  start: number;
  end: number;
  lengthDelimited: boolean;
}

function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const b = bytes[i]!;
    value += (b & 0x7f) * scale;
    scale *= 128;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new ProtoWireError(`a varint at byte ${at} is cut off or longer than 10 bytes`);
}

/** Calls `each` for every top-level field of `bytes` in order. */
function walk(bytes: Uint8Array, each: (f: Field) => void): void {
  let at = 0;
  while (at < bytes.length) {
    const tag = readVarint(bytes, at);
    const number = Math.floor(tag.value / 8);
    const wire = tag.value % 8;
    at = tag.next;
    if (number === 0) throw new ProtoWireError(`field number 0 at byte ${at}`);
    if (wire === 0) {
      at = readVarint(bytes, at).next;
      each({ number, start: at, end: at, lengthDelimited: false });
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
      if (at > bytes.length) throw new ProtoWireError(`field ${number}'s fixed-width value runs past the end`);
      each({ number, start: at, end: at, lengthDelimited: false });
    } else if (wire === 2) {
      const length = readVarint(bytes, at);
      const end = length.next + length.value;
      if (end > bytes.length) throw new ProtoWireError(`field ${number}'s ${length.value} bytes run past the end`);
      each({ number, start: length.next, end, lengthDelimited: true });
      at = end;
    } else {
      throw new ProtoWireError(`field ${number} has wire type ${wire} (groups are not taken)`);
    }
  }
}

/** How often each field number occurs at the top level of the message in `bytes`. */
export function countFields(bytes: Uint8Array): Map<number, number> {
  const counts = new Map<number, number>();
  walk(bytes, (f) => counts.set(f.number, (counts.get(f.number) ?? 0) + 1));
  return counts;
}

/** The bytes of each occurrence of length-delimited field `number` (a sub-message, to count inside it). */
export function fieldMessages(bytes: Uint8Array, number: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  walk(bytes, (f) => {
    if (f.number === number && f.lengthDelimited) out.push(bytes.subarray(f.start, f.end));
  });
  return out;
}
