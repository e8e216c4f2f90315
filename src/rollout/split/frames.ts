import type { Readable, Writable } from 'node:stream';
import { deserialize, serialize } from 'node:v8';

/**
 * Messages between the step's coordinator and its worker processes, over plain pipes: a 4-byte
 * big-endian length, then the message in V8's serialization (Maps, typed arrays and nested trees
 * travel as they are). The reader checks the length before it buffers anything, so a peer that
 * announces more than `maxBytes` is refused at once instead of filling memory.
 */
export class FrameTooLarge extends Error {
  override name = 'FrameTooLarge';
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`a message of ${bytes} bytes is over the limit of ${maxBytes}`);
  }
}

/** Encodes one message; throws FrameTooLarge before writing anything when it is over `maxBytes`. */
export function encodeFrame(message: unknown, maxBytes: number): Buffer {
  const body = serialize(message);
  if (body.length > maxBytes) throw new FrameTooLarge(body.length, maxBytes);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

export function writeFrame(out: Writable, message: unknown, maxBytes: number): Promise<void> {
  const frame = encodeFrame(message, maxBytes);
  return new Promise((resolve, reject) => out.write(frame, (e) => (e ? reject(e) : resolve())));
}

/**
 * Calls `onMessage` with each whole message read from `input`; `onError` once with the first bad
 * frame (over `maxBytes`, or not a V8 message), after which the stream is no longer read.
 */
export function readFrames(input: Readable, maxBytes: number, onMessage: (m: unknown) => void, onError: (e: Error) => void): void {
  let chunks: Buffer[] = [];
  let buffered = 0;
  let need = -1;
  let failed = false;
  const fail = (e: Error) => {
    failed = true;
    chunks = [];
    input.removeListener('data', onData);
    input.resume();
    onError(e);
  };
  const take = (n: number): Buffer => {
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks = all.length > n ? [all.subarray(n)] : [];
    buffered -= n;
    return all.subarray(0, n);
  };
  const onData = (chunk: Buffer) => {
    if (failed) return;
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (need < 0) {
        if (buffered < 4) return;
        need = take(4).readUInt32BE(0);
        if (need > maxBytes) return fail(new FrameTooLarge(need, maxBytes));
      }
      if (buffered < need) return;
      const body = take(need);
      need = -1;
      let message: unknown;
      try {
        message = deserialize(body);
      } catch (e) {
        return fail(new Error(`a message could not be read: ${(e as Error).message}`));
      }
      onMessage(message);
      if (failed) return;
    }
  };
  input.on('data', onData);
}
