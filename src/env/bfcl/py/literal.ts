/**
 * A safe reader for the Python-call strings BFCL uses (`mv(source='a', destination='b')`) and for
 * JSON with Python's number types (tool-call arguments, initial configs). It builds values only:
 * nothing is evaluated, and anything that is not a literal (a name, an attribute, a nested call, an
 * operator other than a sign) is a syntax error.
 */
import { dictKey, PyTuple, type PyDict, type PyValue } from './value.ts';
import { INT_MAX_STR_DIGITS } from './format.ts';

export class LiteralSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at character ${offset + 1}`);
  }
}

export interface ParsedCall {
  name: string;
  args: PyValue[];
  kwargs: [string, PyValue][];
}

type Token =
  | { kind: 'name'; text: string; at: number }
  | { kind: 'number'; value: bigint | number; at: number }
  | { kind: 'string'; value: string; at: number }
  | { kind: 'punct'; text: string; at: number }
  | { kind: 'end'; at: number };

const PUNCT = new Set(['(', ')', '[', ']', '{', '}', ',', ':', '=', '-', '+']);

function tokenize(src: string, json: boolean): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const start = i;
    const prefix = /^([rRuU]?)(['"])/.exec(src.slice(i, i + 2));
    if (prefix && !json) {
      const [value, end] = readPyString(src, i + prefix[1]!.length, prefix[1]!.toLowerCase() === 'r');
      out.push({ kind: 'string', value, at: start });
      i = end;
      continue;
    }
    if (ch === '"' && json) {
      const [value, end] = readJsonString(src, i);
      out.push({ kind: 'string', value, at: start });
      i = end;
      continue;
    }
    const number = json
      ? /^(?:\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(src.slice(i))
      : /^(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)/.exec(src.slice(i));
    if (number && number[0].length > 0 && /[\d.]/.test(ch)) {
      const text = number[0];
      i += text.length;
      if (/^[A-Za-z_\d]/.test(src[i] ?? '')) throw new LiteralSyntaxError('invalid number', start);
      out.push({ kind: 'number', value: readNumber(text, start), at: start });
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (name) {
      out.push({ kind: 'name', text: name[0], at: start });
      i += name[0].length;
      continue;
    }
    if (PUNCT.has(ch)) {
      out.push({ kind: 'punct', text: ch, at: start });
      i++;
      continue;
    }
    throw new LiteralSyntaxError(`unexpected character ${JSON.stringify(ch)}`, start);
  }
  out.push({ kind: 'end', at: src.length });
  return out;
}

function readNumber(text: string, at: number): bigint | number {
  const t = text.replace(/_/g, '');
  if (text.includes('__') || text.endsWith('_')) throw new LiteralSyntaxError('invalid number', at);
  if (/^0[xXoObB]/.test(t)) return BigInt(t.toLowerCase());
  if (/[.eE]/.test(t)) return Number(t);
  if (/^0\d/.test(t) && /[1-9]/.test(t)) throw new LiteralSyntaxError('leading zeros in a decimal integer', at);
  // Python's compiler refuses a decimal int literal past the int/text digit limit (and converting a
  // longer one here would be the unbounded work that limit exists to prevent).
  if (t.length > INT_MAX_STR_DIGITS)
    throw new LiteralSyntaxError(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${t.length} digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.`,
      at,
    );
  return BigInt(t);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\n': '',
};

function readPyString(src: string, i: number, raw: boolean): [string, number] {
  const start = i;
  const q = src[i] as string;
  const triple = src.slice(i, i + 3) === q.repeat(3);
  const close = triple ? q.repeat(3) : q;
  i += close.length;
  let out = '';
  while (true) {
    if (i >= src.length) throw new LiteralSyntaxError('unterminated string', start);
    if (src.startsWith(close, i)) return [out, i + close.length];
    const ch = src[i] as string;
    if (ch === '\n' && !triple) throw new LiteralSyntaxError('unterminated string', start);
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    const next = src[i + 1];
    if (next === undefined) throw new LiteralSyntaxError('unterminated string', start);
    if (raw) {
      out += ch + next;
      i += 2;
      continue;
    }
    if (next in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[next];
      i += 2;
    } else if (/[0-7]/.test(next)) {
      const m = /^[0-7]{1,3}/.exec(src.slice(i + 1)) as RegExpExecArray;
      out += String.fromCodePoint(parseInt(m[0], 8));
      i += 1 + m[0].length;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const width = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = src.slice(i + 2, i + 2 + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) throw new LiteralSyntaxError('truncated escape', i);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) throw new LiteralSyntaxError('escape out of range', i);
      out += String.fromCodePoint(cp);
      i += 2 + width;
    } else if (next === 'N') {
      throw new LiteralSyntaxError('named unicode escapes are not supported', i);
    } else {
      out += ch + next; // Python keeps unknown escapes as written
      i += 2;
    }
  }
}

function readJsonString(src: string, i: number): [string, number] {
  const start = i;
  i++;
  let out = '';
  while (true) {
    if (i >= src.length) throw new LiteralSyntaxError('unterminated string', start);
    const ch = src[i] as string;
    if (ch === '"') return [out, i + 1];
    if (ch.charCodeAt(0) < 0x20) throw new LiteralSyntaxError('control character in string', i);
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    const next = src[i + 1] as string;
    if (next === 'u') {
      const hex = src.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new LiteralSyntaxError('bad \\u escape', i);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 6;
    } else if ('"\\/bfnrt'.includes(next) && next !== undefined) {
      out += next === '/' ? '/' : SIMPLE_ESCAPES[next];
      i += 2;
    } else throw new LiteralSyntaxError('bad escape', i);
  }
}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly json: boolean,
    private readonly maxDepth = 100,
  ) {}

  peek(): Token {
    return this.tokens[this.pos] as Token;
  }
  next(): Token {
    return this.tokens[this.pos++] as Token;
  }
  isPunct(text: string): boolean {
    const t = this.peek();
    return t.kind === 'punct' && t.text === text;
  }
  expect(text: string): void {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== text) throw new LiteralSyntaxError(`expected '${text}'`, t.at);
  }
  end(): void {
    const t = this.peek();
    if (t.kind !== 'end') throw new LiteralSyntaxError('unexpected text after the value', t.at);
  }

  value(depth = 0): PyValue {
    if (depth > this.maxDepth) throw new LiteralSyntaxError('nesting too deep', this.peek().at);
    const t = this.next();
    switch (t.kind) {
      case 'number':
        return t.value;
      case 'string': {
        let s = t.value;
        while (!this.json && this.peek().kind === 'string') s += (this.next() as { value: string }).value;
        return s;
      }
      case 'name':
        return this.constant(t);
      case 'punct':
        return this.compound(t, depth);
      case 'end':
        throw new LiteralSyntaxError('unexpected end of input', t.at);
    }
  }

  private constant(t: { text: string; at: number }): PyValue {
    const table: Record<string, PyValue> = this.json
      ? { true: true, false: false, null: null, NaN: Number.NaN, Infinity: Infinity }
      : { True: true, False: false, None: null };
    if (Object.hasOwn(table, t.text)) return table[t.text] as PyValue;
    throw new LiteralSyntaxError(`'${t.text}' is not a literal (names, calls and attributes are never evaluated)`, t.at);
  }

  private compound(t: { text: string; at: number }, depth: number): PyValue {
    if (t.text === '-' || t.text === '+') {
      const operand = this.peek();
      const v = this.value(depth + 1);
      if (typeof v !== 'bigint' && typeof v !== 'number') throw new LiteralSyntaxError('a sign must precede a number', operand.at);
      return t.text === '-' ? (typeof v === 'bigint' ? -v : -v) : v;
    }
    if (t.text === '[') return this.items(']', depth);
    if (t.text === '(' && !this.json) {
      if (this.isPunct(')')) {
        this.next();
        return new PyTuple([]);
      }
      const first = this.value(depth + 1);
      if (this.isPunct(')')) {
        this.next();
        return first;
      }
      this.expect(',');
      const rest = this.isPunct(')') ? (this.next(), []) : this.items(')', depth);
      return new PyTuple([first, ...(rest as PyValue[])]);
    }
    if (t.text === '{') return this.braces(depth);
    throw new LiteralSyntaxError(`unexpected '${t.text}'`, t.at);
  }

  private items(close: string, depth: number): PyValue[] {
    const out: PyValue[] = [];
    while (!this.isPunct(close)) {
      out.push(this.value(depth + 1));
      if (this.isPunct(close)) break;
      this.expect(',');
      if (this.json && this.isPunct(close)) throw new LiteralSyntaxError('trailing comma', this.peek().at);
    }
    this.next();
    return out;
  }

  private braces(depth: number): PyValue {
    const d: PyDict = new Map();
    if (this.isPunct('}')) {
      this.next();
      return d;
    }
    while (true) {
      const keyToken = this.peek();
      const key = this.value(depth + 1);
      if (this.json && typeof key !== 'string') throw new LiteralSyntaxError('object keys must be strings', keyToken.at);
      if (!this.isPunct(':')) throw new LiteralSyntaxError(this.json ? "expected ':'" : 'set literals are not supported', this.peek().at);
      this.next();
      if (Array.isArray(key) || key instanceof Map) throw new LiteralSyntaxError(`unhashable type: '${Array.isArray(key) ? 'list' : 'dict'}'`, keyToken.at);
      d.set(dictKey(key), this.value(depth + 1));
      if (this.isPunct('}')) break;
      this.expect(',');
      if (this.isPunct('}')) {
        if (this.json) throw new LiteralSyntaxError('trailing comma', this.peek().at);
        break;
      }
    }
    this.next();
    return d;
  }

  call(): ParsedCall {
    const c = this.callBody();
    this.end();
    return c;
  }

  callBody(): ParsedCall {
    const head = this.next();
    if (head.kind !== 'name') throw new LiteralSyntaxError('expected a function name', head.at);
    if (this.isPunct('.')) throw new LiteralSyntaxError('attribute access is not allowed', this.peek().at);
    this.expect('(');
    const args: PyValue[] = [];
    const kwargs: [string, PyValue][] = [];
    while (!this.isPunct(')')) {
      const t = this.peek();
      const after = this.tokens[this.pos + 1];
      if (t.kind === 'name' && after?.kind === 'punct' && after.text === '=') {
        this.pos += 2;
        if (kwargs.some(([k]) => k === t.text)) throw new LiteralSyntaxError(`keyword argument repeated: ${t.text}`, t.at);
        kwargs.push([t.text, this.value(1)]);
      } else {
        if (kwargs.length > 0) throw new LiteralSyntaxError('positional argument follows keyword argument', t.at);
        args.push(this.value(1));
      }
      if (this.isPunct(')')) break;
      this.expect(',');
    }
    this.next();
    return { name: head.text, args, kwargs };
  }
}

/** Parse one call `name(arg, key=value, ...)` whose arguments are Python literals. */
export function parseCall(text: string): ParsedCall {
  return new Parser(tokenize(text, false), false).call();
}

/** Parse a Python literal (`[1, 'a', {'k': None}]`). */
export function parsePythonLiteral(text: string): PyValue {
  const p = new Parser(tokenize(text, false), false);
  const v = p.value();
  p.end();
  return v;
}

/** Parse JSON keeping Python's number types: `3` is an int, `3.0` a float (as Python's json.loads does). */
export function parseJson(text: string): PyValue {
  const p = new Parser(tokenize(text, true), true);
  const v = p.value();
  p.end();
  return v;
}

/** Parse a model's text as BFCL's prompt format: `[f(a=1), g(b='x')]` (the brackets may be missing). */
export function parseCallList(text: string): ParsedCall[] {
  let t = text.trim().replace(/^[`\n ]+|[`\n ]+$/g, '');
  if (!t.startsWith('[')) t = `[${t}`;
  if (!t.endsWith(']')) t = `${t}]`;
  const p = new Parser(tokenize(t, false), false);
  p.expect('[');
  const calls: ParsedCall[] = [];
  while (!p.isPunct(']')) {
    calls.push(p.callBody());
    if (p.isPunct(']')) break;
    p.expect(',');
  }
  p.next();
  p.end();
  return calls;
}
