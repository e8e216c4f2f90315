import type { RolloutTree, TokenSpan, TreeNode } from '../tree/types.ts';

/**
 * How a tree is kept in `run.sqlite`: its JSON with every turn's token span moved into binary arrays
 * after it. A step's trees are mostly per-token numbers, and as JSON text a log-probability costs about
 * 20 characters and a float-to-shortest-text conversion; here it costs 8 bytes copied. Values are kept
 * exactly (ids and masks as 32-bit or 8-bit integers only when every value fits, else as doubles), so a
 * tree reads back equal to the one written.
 *
 * Layout: "TRT1", the JSON's byte length (u32 LE), the JSON (each span replaced by `{ n, prompt?, sequenceId? }`;
 * a span whose arrays differ in length stays whole in the JSON),
 * zero padding to a multiple of 8, then one block per array kind — log-probabilities, ids, masks, each
 * the spans' values in node order — every block a kind byte (KIND below) padded to 8 bytes, then values.
 * Rows stored as text (runs written before this format) are read as JSON.
 */
const MAGIC = 'TRT1';
const KIND = { f64: 0, i32: 1, u8: 2 } as const;
type Kind = keyof typeof KIND;

interface Packed {
  n: number;
  prompt?: TokenSpan['prompt'];
  sequenceId?: string;
}

/** The tree as stored: JSON text followed by its spans' numbers. */
export function encodeTree(tree: RolloutTree): Buffer {
  const spans: TokenSpan[] = [];
  const nodes: Record<string, TreeNode> = {};
  for (const [id, node] of Object.entries(tree.nodes)) {
    const span = node.turn?.tokens;
    // A span whose arrays disagree in length (a policy's bug) stays in the JSON as it is: stored, not lost.
    if (!span || !isPackable(span)) {
      nodes[id] = node;
      continue;
    }
    spans.push(span);
    const packed: Packed = { n: span.ids.length, ...(span.prompt ? { prompt: span.prompt } : {}), ...(span.sequenceId ? { sequenceId: span.sequenceId } : {}) };
    nodes[id] = { ...node, turn: { ...node.turn!, tokens: packed as unknown as TokenSpan } };
  }
  const json = Buffer.from(JSON.stringify({ ...tree, nodes }), 'utf8');
  const total = spans.reduce((a, s) => a + s.ids.length, 0);
  const kinds: Kind[] = ['f64', fits(spans, 'ids', 'i32') ? 'i32' : 'f64', fits(spans, 'mask', 'u8') ? 'u8' : 'f64'];
  const head = pad8(8 + json.length);
  const blocks = kinds.map((k) => 8 + pad8(total * BYTES[k]));
  const out = Buffer.alloc(head + blocks.reduce((a, b) => a + b, 0)); // not pooled: starts 8-aligned
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(json.length, 4);
  json.copy(out, 8);
  let at = head;
  (['logprobs', 'ids', 'mask'] as const).forEach((field, i) => {
    const kind = kinds[i]!;
    out[at] = KIND[kind];
    const values = view(out, at + 8, total, kind);
    let j = 0;
    for (const s of spans) {
      const from = s[field];
      for (let t = 0; t < from.length; t++) values[j++] = from[t]!;
    }
    at += blocks[i]!;
  });
  return out;
}

/** A stored tree: the binary form above, or JSON text (rows written before it). */
export function decodeTree(row: Buffer | string): RolloutTree {
  if (typeof row === 'string') return JSON.parse(row) as RolloutTree;
  if (row.length < 8 || row.toString('latin1', 0, 4) !== MAGIC) throw new RangeError('a stored tree is neither JSON text nor the binary tree format');
  const jsonLength = row.readUInt32LE(4);
  if (8 + jsonLength > row.length) throw new RangeError('a stored tree is cut short or damaged');
  const tree = JSON.parse(row.toString('utf8', 8, 8 + jsonLength)) as RolloutTree;
  const spans: Array<{ packed: Packed; node: TreeNode }> = [];
  for (const node of Object.values(tree.nodes)) {
    const packed = node.turn?.tokens as unknown as (Packed & { ids?: unknown }) | undefined;
    if (!packed || packed.ids !== undefined) continue; // no span, or one kept in the JSON
    if (!Number.isInteger(packed.n) || packed.n < 0) throw new RangeError('a stored tree is damaged: a token span has no length');
    spans.push({ packed, node });
  }
  const total = spans.reduce((a, s) => a + s.packed.n, 0);
  let at = pad8(8 + jsonLength);
  const arrays = [0, 1, 2].map(() => {
    const kind = (Object.keys(KIND) as Kind[]).find((k) => KIND[k] === row[at]);
    if (!kind || at + 8 + total * BYTES[kind] > row.length) throw new RangeError('a stored tree is cut short or damaged');
    const values = view(row, at + 8, total, kind);
    at += 8 + pad8(total * BYTES[kind]);
    return values;
  });
  let from = 0;
  for (const { packed, node } of spans) {
    const to = from + packed.n;
    const span: TokenSpan = {
      ids: numbers(arrays[1]!, from, to),
      logprobs: numbers(arrays[0]!, from, to),
      mask: numbers(arrays[2]!, from, to),
    };
    if (packed.prompt) span.prompt = packed.prompt;
    if (typeof packed.sequenceId === 'string') span.sequenceId = packed.sequenceId;
    node.turn!.tokens = span;
    from = to;
  }
  return tree;
}

/** A plain array of `values[from..to)` (trees hold plain arrays; Array.from is slower than a push loop). */
function numbers(values: ArrayLike<number>, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(values[i]!);
  return out;
}

const BYTES: Record<Kind, number> = { f64: 8, i32: 4, u8: 1 };
const pad8 = (n: number) => Math.ceil(n / 8) * 8;

function view(buf: Buffer, offset: number, length: number, kind: Kind): Float64Array | Int32Array | Uint8Array {
  // Typed arrays need aligned offsets; a row read from SQLite need not be aligned in memory, so its
  // block is copied out when it is not.
  const start = buf.byteOffset + offset;
  const aligned = start % 8 === 0;
  const memory = aligned ? buf.buffer : buf.buffer.slice(start, start + length * BYTES[kind]);
  const at = aligned ? start : 0;
  if (kind === 'f64') return new Float64Array(memory, at, length);
  if (kind === 'i32') return new Int32Array(memory, at, length);
  return new Uint8Array(memory, at, length);
}

function isPackable(span: TokenSpan): boolean {
  return (
    Array.isArray(span.ids) &&
    Array.isArray(span.logprobs) &&
    Array.isArray(span.mask) &&
    span.logprobs.length === span.ids.length &&
    span.mask.length === span.ids.length
  );
}

function fits(spans: readonly TokenSpan[], field: 'ids' | 'mask', kind: 'i32' | 'u8'): boolean {
  const [lo, hi] = kind === 'i32' ? [-(2 ** 31), 2 ** 31 - 1] : [0, 255];
  for (const s of spans) for (const v of s[field]) if (!Number.isInteger(v) || v < lo || v > hi || Object.is(v, -0)) return false;
  return true;
}
