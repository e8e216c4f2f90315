/**
 * Final-answer checking for math: take the last `\boxed{…}` of a response, normalise the surface
 * forms that carry no mathematical content (dollar signs, `\text{}`, units, `\left`/`\right`,
 * `\dfrac`, thousands separators, `x =` prefixes, trailing `.0`, percent, degrees), and decide
 * equivalence. The mathematics is the Compute Engine's (`@cortex-js/compute-engine` parses the LaTeX,
 * evaluates numbers and compares expressions); this file only decides which forms to compare:
 *  1. equal normalised strings;
 *  2. unordered top-level lists ("1, -2" = "-2, 1"), tuples/intervals/matrices element-wise in order;
 *  3. numbers: exactly, as fractions, when both sides are rational (integers, fractions, terminating
 *     decimals and their arithmetic): a tolerance there accepted 1000001 for 1000000 and 0 for 1/2^20;
 *     a gold written as a decimal approximates an irrational answer (2.24 for √5) when the answer
 *     rounds to it at the gold's places; any other irrational value is compared in floating point only
 *     within the evaluation's own rounding ({@link REL_TOLERANCE});
 *  4. expressions with free variables: equal values at fixed sample points (x = 0.37, 1.91, −2.3…).
 * Answers are model output, so the work is bounded: brackets nested deeper than
 * {@link GRADE_LIMITS}.nesting overflowed the parser's stack, `\boxed{1000000000!}` ran the engine's
 * exact factorial for 7.5 s and threw, and list elements were compared pairwise (10,000: over 60 s).
 * Such an answer is not correct, and the grade says why it was not compared ({@link Grade.undecided}).
 */
import { ComputeEngine } from '@cortex-js/compute-engine';

// Built on first use: constructing the engine costs ~0.1 s of CPU (its LaTeX dictionaries), which every
// command that merely loads the math kind's module (the configuration schema, `trace-rl config`) paid.
let engine: ComputeEngine | undefined;
const ce = (): ComputeEngine => (engine ??= new ComputeEngine());
type BoxedExpression = ReturnType<ComputeEngine['parse']>;

/** What one grade may cost. */
export const GRADE_LIMITS = {
  /** Deepest bracket nesting parsed (MATH answers nest a few levels; 3,000 overflowed the stack). */
  nesting: 64,
  /** Longest single expression handed to the Compute Engine, in characters (lists are split first). */
  expressionChars: 20_000,
  /** Largest n! evaluated exactly (10,000! takes 20 ms, 100,000! 5 s). */
  factorial: 10_000,
  /** Value comparisons between list elements written differently (the rest match by their text). */
  listComparisons: 256,
  /** Wall time of one grade (all gold answers), checked between engine calls. */
  ms: 2000,
};

/** A grade: `undecided` says why the answer could not be compared (then it is not correct). */
export interface Grade {
  correct: boolean;
  undecided?: string;
}

/** Why an answer is not compared; caught at the top of a grade. */
class Undecided extends Error {}

/** The content of the last `\boxed{…}` (or `\fbox{…}`, or `\boxed 5`) in `text`, braces balanced; undefined when there is none. */
export function lastBoxed(text: string): string | undefined {
  const at = Math.max(text.lastIndexOf('\\boxed'), text.lastIndexOf('\\fbox'));
  if (at < 0) return undefined;
  let i = at + (text.startsWith('\\boxed', at) ? 6 : 5);
  if (text[i] === ' ' && text[i + 1] !== '{') {
    const m = /^ ([^\s$]+)/.exec(text.slice(i));
    return m ? m[1] : undefined;
  }
  while (text[i] === ' ') i++;
  if (text[i] !== '{') return undefined;
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(i + 1, j).trim();
  }
  return undefined;
}

/** Unit words removed after a number ("18 dollars", "5 cm", "3 \text{ inches}"). */
const UNITS =
  /\s*(?:dollars?|cents?|units?|(?:square|cubic|sq\.?)\s+\w+|(?:centi|milli|kilo)?met(?:er|re)s?|[ckm]?m|inch(?:es)?|in|feet|foot|ft|yards?|miles?|mph|hours?|hrs?|minutes?|mins?|seconds?|secs?|s|days?|weeks?|months?|years?|degrees?|pounds?|lbs?|ounces?|oz|grams?|g|kg|liters?|litres?|gallons?|people|students|apples|eggs|points?|pages?|percent)\.?\s*$/i;

/** Removes the surface forms listed in the file comment; the result is still LaTeX. */
export function normalizeMathAnswer(raw: string): string {
  let s = raw.trim();
  s = s
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '');
  s = s.replace(/\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}/g, '$1');
  s = s.replace(/\\(?:left|right|big|Big|bigg|Bigg)(?=[()[\]|.]|\\\{|\\\}|\\[lr]?[vV]ert|\\lfloor|\\rfloor|\\lceil|\\rceil|\\langle|\\rangle)/g, '');
  s = s.replace(/\\left\.|\\right\./g, '');
  s = s.replace(/\\[dt]frac/g, '\\frac').replace(/\\displaystyle/g, '');
  // Brace-less fractions ("\frac59", "\frac9{19}", "\frac{9}2") get their braces.
  s = s
    .replace(/\\frac\s*([0-9a-zA-Z])\s*([0-9a-zA-Z])/g, '\\frac{$1}{$2}')
    .replace(/\\frac\s*([0-9a-zA-Z])\s*\{/g, '\\frac{$1}{')
    .replace(/\\frac\s*(\{[^{}]*\})\s*([0-9a-zA-Z])/g, '\\frac$1{$2}');
  s = s.replace(/(?<!\\)\\[,;:! ]|~/g, ' ');
  s = s.replace(/\^\s*\{?\s*\\circ\s*\}?|°|\\degree/g, '');
  s = s.replace(/\\?%|\\percent/g, '');
  s = s.replace(/\\\$|\$/g, '');
  s = s.replace(/\s+/g, ' ').trim();
  s = s.replace(/\.$/, '').trim();
  // "x = 5", "y=2x+1", "x \in [-2,7]": the variable is the question's, the answer is the right side.
  s = s.replace(/^[a-zA-Z](?:_\{?\w+\}?)?\s*(?:=|\\in)\s*(?=\S)/, '');
  const unitless = s.replace(UNITS, '');
  if (unitless !== s && /\d/.test(unitless)) s = unitless.trim();
  // Thousands separators: only where every group after a comma has three digits ("1,000,000", "1{,}000").
  s = s.replace(/\{,\}/g, ',');
  if (/^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  s = s
    .replace(/^(-?)0+(?=\d)/, '$1')
    .replace(/^(-?\d+)\.0+$/, '$1')
    .replace(/^(-?\d+\.\d*?[1-9])0+$/, '$1');
  // A lone choice letter: "(C)" = "C".
  s = s.replace(/^\(([A-Ea-e])\)$/, '$1');
  // Mixed numbers ("137 \frac{1}{2}") mean a sum, not a product.
  s = s.replace(
    /^(-?)(\d+)\s*\\frac\s*(\{[^{}]*\}|\d)\s*(\{[^{}]*\}|\d)$/,
    (_, sign: string, w: string, n: string, d: string) => `${sign}(${w}+\\frac${n}${d})`,
  );
  return s;
}

/** True when `answer` (a final answer, not a whole response) is equivalent to `gold`. */
export function answersMatch(gold: string, answer: string): boolean {
  return gradeAgainst([gold], answer).correct;
}

/** A final answer or a whole response (then its last `\boxed{}`) against the gold answers. */
export function gradeAnswer(answerOrResponse: string, golds: readonly string[]): boolean {
  return gradeDetailed(answerOrResponse, golds).correct;
}

/** {@link gradeAnswer} with the reason when the answer could not be compared within the limits. */
export function gradeDetailed(answerOrResponse: string, golds: readonly string[]): Grade {
  return gradeAgainst(golds, lastBoxed(answerOrResponse) ?? answerOrResponse);
}

/** The graded result of a whole response: its last boxed answer against the gold answers. */
export function gradeResponse(response: string, golds: readonly string[]): { correct: boolean; extracted?: string } {
  const extracted = lastBoxed(response);
  if (extracted === undefined) return { correct: false };
  return { correct: gradeAgainst(golds, extracted).correct, extracted };
}

/** One answer against several golds under one time budget; correct when any gold matches. */
function gradeAgainst(golds: readonly string[], answer: string): Grade {
  const deadline = performance.now() + GRADE_LIMITS.ms;
  let undecided: string | undefined;
  for (const g of golds) {
    try {
      if (matches(g, answer, deadline)) return { correct: true };
    } catch (e) {
      if (!(e instanceof Undecided)) throw e;
      undecided ??= e.message;
    }
  }
  return undecided === undefined ? { correct: false } : { correct: false, undecided };
}

/** Whitespace-free normal form: equal keys are equal answers without asking the engine. */
const textKey = (s: string) => normalizeMathAnswer(s).replace(/\s/g, '');

function matches(gold: string, answer: string, deadline: number): boolean {
  const g = normalizeMathAnswer(gold);
  const a = normalizeMathAnswer(answer);
  if (g.length === 0 || a.length === 0) return false;
  if (g === a || g.replace(/\s/g, '') === a.replace(/\s/g, '')) return true;
  const gl = splitTopLevel(g);
  const al = splitTopLevel(a);
  if (gl.length > 1 || al.length > 1) return listsMatch(gl, al, deadline);
  const gt = tupleElements(g);
  const at = tupleElements(a);
  if (gt && at)
    return gt.open === at.open && gt.close === at.close && gt.items.length === at.items.length && gt.items.every((x, i) => matches(x, at.items[i]!, deadline));
  const exact = withEngine(() => exactComparison(g, a));
  if (exact !== undefined) return exact;
  return withEngine(() => expressionsMatch(parse(g), parse(a), deadline));
}

/**
 * "(1, -2)", "[-2, 7)": the brackets and the top-level elements, so that each element gets the exact
 * comparison (the engine's canonical form folds tiny values to 0 before any comparison).
 */
function tupleElements(s: string): { open: string; close: string; items: string[] } | undefined {
  const open = s[0];
  const close = s[s.length - 1];
  if (!open || !close || !'([{'.includes(open) || !')]}'.includes(close)) return undefined;
  const inner = s.slice(1, -1);
  // The outer brackets must enclose the whole string ("(1)+(2)" is no tuple).
  let depth = 0;
  for (const c of inner) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    if (depth < 0) return undefined;
  }
  if (depth !== 0) return undefined;
  const items = splitTopLevel(inner);
  return items.length > 1 ? { open, close, items } : undefined;
}

/**
 * Unordered lists: elements pair off by their text first (a multiset count, linear), and only the
 * elements left over are compared by value, at most {@link GRADE_LIMITS}.listComparisons pairs.
 */
function listsMatch(gl: readonly string[], al: readonly string[], deadline: number): boolean {
  if (gl.length !== al.length) return false;
  const unpaired = new Map<string, string[]>();
  for (const x of gl) unpaired.set(textKey(x), [...(unpaired.get(textKey(x)) ?? []), x]);
  const restA: string[] = [];
  for (const y of al) {
    const same = unpaired.get(textKey(y));
    if (same && same.length > 0) same.pop();
    else restA.push(y);
  }
  const restG = [...unpaired.values()].flat();
  if (restG.length === 0) return true;
  if (restG.length * restA.length > GRADE_LIMITS.listComparisons)
    throw new Undecided(
      `${restG.length} list elements are written differently from the gold's; at most ${Math.floor(Math.sqrt(GRADE_LIMITS.listComparisons))} are compared by value`,
    );
  for (const x of restG) {
    const k = restA.findIndex((y) => matches(x, y, deadline));
    if (k < 0) return false;
    restA.splice(k, 1);
  }
  return true;
}

/**
 * Runs Compute Engine work on an answer that passed the limits; anything it throws on such input
 * (its own timeout, a stack overflow) makes the answer undecided rather than crashing the grade.
 */
function withEngine<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof Undecided) throw e;
    throw new Undecided(
      `the Compute Engine could not compare it (${(e as Error).name}: ${String((e as Error).message)
        .split('\n')[0]!
        .slice(0, 80)})`,
    );
  }
}

/** Splits "1, -2" at top-level commas (not inside brackets or braces). */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(s.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

/** Parses one expression after checking the limits that protect the parser and the evaluator. */
function parse(latex: string): BoxedExpression {
  if (latex.length > GRADE_LIMITS.expressionChars)
    throw new Undecided(`an expression of ${latex.length} characters (at most ${GRADE_LIMITS.expressionChars} are parsed)`);
  const depth = nesting(latex);
  if (depth > GRADE_LIMITS.nesting) throw new Undecided(`the answer nests brackets ${depth} deep (at most ${GRADE_LIMITS.nesting} are parsed)`);
  const e = ce().parse(latex);
  checkFactorials(e);
  return e;
}

/** Deepest nesting of (), [] and {} in a string. */
function nesting(s: string): number {
  let depth = 0;
  let max = 0;
  for (const c of s) {
    if (c === '(' || c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ')' || c === ']' || c === '}') depth--;
  }
  return max;
}

/** Refuses n! (and n!!) unless n is a literal no larger than the limit: exact factorials grow without bound. */
function checkFactorials(root: BoxedExpression): void {
  const stack = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e.operator === 'Factorial' || e.operator === 'Factorial2') {
      const n = e.op1;
      const value = n.isNumberLiteral ? n.re : NaN;
      if (!(Math.abs(value) <= GRADE_LIMITS.factorial))
        throw new Undecided(`a factorial of a large or computed number (${n.toString().slice(0, 40)}!; at most ${GRADE_LIMITS.factorial}! is evaluated)`);
    }
    if (e.ops) stack.push(...e.ops);
  }
}

const SAMPLE_POINTS = [0.37, 1.91, -2.3, 3.7];
const ORDERED_HEADS = new Set(['Tuple', 'List', 'Pair', 'Triple', 'Matrix', 'Interval', 'Delimiter', 'Range']);

function expressionsMatch(g: BoxedExpression, a: BoxedExpression, deadline: number): boolean {
  if (performance.now() > deadline) throw new Undecided(`grading took over ${GRADE_LIMITS.ms} ms`);
  if (!g.isValid || !a.isValid) return false;
  if (g.isSame(a)) return true;
  if (ORDERED_HEADS.has(g.operator) || ORDERED_HEADS.has(a.operator)) {
    if (g.operator !== a.operator || g.nops !== a.nops) return false;
    return g.ops!.every((x: BoxedExpression, i: number) => expressionsMatch(x, a.ops![i]!, deadline));
  }
  const vars = [...new Set([...g.unknowns, ...a.unknowns])];
  if (vars.length === 0) return numbersMatch(g, a);
  if (vars.length > 3) return false;
  return SAMPLE_POINTS.every((_, k) => {
    const at: Record<string, number> = {};
    vars.forEach((v, j) => (at[v] = SAMPLE_POINTS[(k + j) % SAMPLE_POINTS.length]!));
    return numbersMatch(g.subs(at), a.subs(at));
  });
}

/**
 * Relative difference accepted between two values of which one is irrational (π, √3): what the
 * evaluation's double arithmetic can lose, so 16√3 = √768 and π = 3.14159265358979, but not 3.141593.
 */
export const REL_TOLERANCE = 1e-10;

function numbersMatch(g: BoxedExpression, a: BoxedExpression): boolean {
  const x = complexValue(g);
  const y = complexValue(a);
  if (!x || !y) return g.isEqual(a) === true;
  const tol = REL_TOLERANCE * Math.max(Math.hypot(...x), Math.hypot(...y)) + Number.MIN_VALUE;
  return Math.abs(x[0] - y[0]) <= tol && Math.abs(x[1] - y[1]) <= tol;
}

/** An exact rational n/d, d > 0, in lowest terms. */
interface Rational {
  n: bigint;
  d: bigint;
}

/** Largest numerator or denominator, in bits, computed exactly (10^1000 is 3,322 bits). */
const RATIONAL_BITS = 8192;

/**
 * The verdict when both sides are rational numbers (exact) or the gold is a decimal approximating an
 * irrational answer; undefined when neither applies and the engine decides.
 */
function exactComparison(g: string, a: string): boolean | undefined {
  const gr = exactRational(g);
  if (!gr) return undefined;
  const ar = exactRational(a);
  if (ar) return gr.n === ar.n && gr.d === ar.d;
  const places = /^-?\d*\.(\d+)$/.exec(g)?.[1]?.length;
  if (places === undefined) return undefined;
  const y = complexValue(parse(a));
  if (!y || y[1] !== 0) return undefined;
  // Rounded to the gold's places (half a unit in its last place, with the double's own slack).
  const gold = Number(gr.n) / Number(gr.d);
  return Math.abs(y[0] - gold) <= 0.5 * 10 ** -places * (1 + 1e-9);
}

/** The exact value of a LaTeX number built from literals by + − × ÷ and integer powers, or undefined. */
function exactRational(latex: string): Rational | undefined {
  // Repeating decimals arrive as a truncated literal; they are not exact.
  if (/\\overline|\\dot/.test(latex)) return undefined;
  if (latex.length > GRADE_LIMITS.expressionChars || nesting(latex) > GRADE_LIMITS.nesting) return undefined;
  // The parser folds "3.7 \times 10^{-30}" into a double (here 0); a braced base keeps the power.
  const text = latex.replace(/(\\times|\\cdot)\s*10\s*\^/g, '$1{10}^');
  return rationalOf(ce().parse(text, { canonical: false }).json as unknown);
}

function rationalOf(e: unknown): Rational | undefined {
  if (typeof e === 'number') return decimalRational(String(e));
  if (typeof e === 'object' && e !== null && !Array.isArray(e) && typeof (e as { num?: unknown }).num === 'string')
    return decimalRational((e as { num: string }).num);
  if (!Array.isArray(e) || typeof e[0] !== 'string') return undefined;
  const [head, ...args] = e as [string, ...unknown[]];
  const ops: Rational[] = [];
  for (const x of args) {
    const r = rationalOf(x);
    if (!r) return undefined;
    ops.push(r);
  }
  const [x, y] = ops;
  // Juxtaposition is a product ("2(3+1)"), except where it may be a mixed number or a digit run
  // ("2\frac12", "2 3"): those are left to the engine.
  const literal = (v: unknown) => typeof v === 'number' || (typeof v === 'object' && v !== null && !Array.isArray(v));
  if (head === 'InvisibleOperator' && args.some((v, i) => i > 0 && literal(args[i - 1]) && (literal(v) || (Array.isArray(v) && v[0] === 'Divide'))))
    return undefined;
  switch (head) {
    case 'Delimiter':
      return ops.length === 1 ? x : undefined;
    case 'Negate':
      return ops.length === 1 ? { n: -x!.n, d: x!.d } : undefined;
    case 'Add':
      return ops.reduce<Rational | undefined>((s, r) => s && reduced(s.n * r.d + r.n * s.d, s.d * r.d), { n: 0n, d: 1n });
    case 'Subtract':
      return ops.length === 2 ? reduced(x!.n * y!.d - y!.n * x!.d, x!.d * y!.d) : undefined;
    case 'Multiply':
    case 'InvisibleOperator':
      return ops.reduce<Rational | undefined>((s, r) => s && reduced(s.n * r.n, s.d * r.d), { n: 1n, d: 1n });
    case 'Divide':
    case 'Rational':
      return ops.length === 2 && y!.n !== 0n ? reduced(x!.n * y!.d, x!.d * y!.n) : undefined;
    case 'Power':
      return ops.length === 2 ? power(x!, y!) : undefined;
    case 'Sqrt':
      return ops.length === 1 ? rationalSqrt(x!) : undefined;
    default:
      return undefined;
  }
}

/** "12.5", "-3", "1.5e-7" as an exact fraction; undefined for anything else ("Infinity", "NaN"). */
function decimalRational(s: string): Rational | undefined {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(s.trim());
  if (!m || (m[2] === '' && !m[3])) return undefined;
  const exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  if (Math.abs(exp) * 3.33 > RATIONAL_BITS) return undefined;
  const digits = BigInt(`${m[2] || '0'}${m[3] ?? ''}`) * (m[1] === '-' ? -1n : 1n);
  return exp >= 0 ? reduced(digits * 10n ** BigInt(exp), 1n) : reduced(digits, 10n ** BigInt(-exp));
}

/** x^y for an integer y, when the result stays within {@link RATIONAL_BITS}; sized before computing. */
function power(x: Rational, y: Rational): Rational | undefined {
  if (y.d !== 1n) return undefined;
  const k = y.n < 0n ? -y.n : y.n;
  const bits = BigInt(Math.max(bitLength(x.n), bitLength(x.d)));
  if (bits * k > BigInt(RATIONAL_BITS)) return undefined;
  if (y.n < 0n && x.n === 0n) return undefined;
  const [n, d] = y.n < 0n ? [x.d, x.n] : [x.n, x.d];
  return reduced(n ** k, d ** k);
}

/** √(n/d) when n and d are perfect squares, else undefined (irrational). */
function rationalSqrt(x: Rational): Rational | undefined {
  if (x.n < 0n) return undefined;
  const n = isqrt(x.n);
  const d = isqrt(x.d);
  return n * n === x.n && d * d === x.d ? { n, d } : undefined;
}

function isqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = BigInt(Math.floor(Math.sqrt(Number(v))));
  while (x * x > v) x--;
  while ((x + 1n) * (x + 1n) <= v) x++;
  return x;
}

const bitLength = (v: bigint) => (v < 0n ? -v : v).toString(2).length;

/** n/d in lowest terms with d > 0; undefined past {@link RATIONAL_BITS}. */
function reduced(n: bigint, d: bigint): Rational | undefined {
  if (d === 0n) return undefined;
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n < 0n ? -n : n, d);
  const r = { n: n / g, d: d / g };
  return bitLength(r.n) > RATIONAL_BITS || bitLength(r.d) > RATIONAL_BITS ? undefined : r;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** [re, im] of a numeric expression, or undefined when it does not evaluate to a finite number. */
function complexValue(e: BoxedExpression): [number, number] | undefined {
  const n = e.N();
  const re = n.re;
  const im = n.im;
  if (typeof re !== 'number' || !Number.isFinite(re)) return undefined;
  const imag = typeof im === 'number' && Number.isFinite(im) ? im : 0;
  return [re, imag];
}
