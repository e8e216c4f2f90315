import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { readTextFile } from '../../../src/util/bounded-read.ts';
import { answersMatch, gradeDetailed, gradeResponse, lastBoxed, normalizeMathAnswer } from '../../../src/env/math/grader.ts';
import { runCli } from '../../helpers/run-cli.ts';

const data = (f: string) =>
  readTextFile(fileURLToPath(new URL(`../../../data/math/${f}`, import.meta.url)))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** GSM8K's final answer: the text after "#### ", thousands separators as written. */
const gsm8k = data('gsm8k-test.jsonl.gz').map((r) => String(r.answer).split('####').pop()!.trim());
const math500 = data('math500.jsonl.gz').map((r) => String(r.answer));

/**
 * Hand-checked pairs (gold, answer, equivalent?), most taken from MATH 500 gold answers: surface
 * rewrites that must match and near misses that must not.
 */
const HAND: Array<[string, string, boolean]> = [
  ['137 \\frac{1}{2}', '137.5', true],
  ['137 \\frac{1}{2}', '68.5', false],
  ['\\frac9{19}', '\\frac{9}{19}', true],
  ['\\frac9{19}', '\\frac{19}{9}', false],
  ['\\frac 59', '5/9', true],
  ['16 \\sqrt{3}', '16\\sqrt3', true],
  ['16 \\sqrt{3}', '\\sqrt{768}', true],
  ['16 \\sqrt{3}', '16\\sqrt{2}', false],
  ['1 - 12i', '1-12i', true],
  ['1 - 12i', '1+12i', false],
  ['-2 + 7i', '7i-2', true],
  ['1+2i', '1+2j', false],
  ['204_5', '204_{5}', true],
  ['204_5', '204', false],
  ['x \\in [-2,7]', '[-2, 7]', true],
  ['x \\in [-2,7]', '[-2, 7)', false],
  ['x \\in [-2,7]', '[-7, 2]', false],
  ['\\begin{pmatrix} -7 \\\\ 16 \\\\ 5 \\end{pmatrix}', '\\begin{pmatrix}-7\\\\16\\\\5\\end{pmatrix}', true],
  ['\\begin{pmatrix} 1/5 \\\\ -18/5 \\end{pmatrix}', '\\begin{pmatrix} 0.2 \\\\ -3.6 \\end{pmatrix}', true],
  ['\\begin{pmatrix} 1/5 \\\\ -18/5 \\end{pmatrix}', '\\begin{pmatrix} 0.2 \\\\ 3.6 \\end{pmatrix}', false],
  ['\\begin{pmatrix} -1/3 \\\\ 2/3 \\\\ 5/3 \\end{pmatrix}', '\\begin{pmatrix} 2/3 \\\\ -1/3 \\\\ 5/3 \\end{pmatrix}', false],
  ['(-2,1)', '(-2, 1)', true],
  ['(-2,1)', '\\left( -2, 1 \\right)', true],
  ['(-2,1)', '(1,-2)', false],
  ['\\pi', '3.14159265358979', true],
  ['\\pi', '3.14', false],
  ['2\\pi', '\\pi \\cdot 2', true],
  ['1 \\pm \\sqrt{19}', '1\\pm\\sqrt{19}', true],
  ['1 \\pm \\sqrt{19}', '1\\pm\\sqrt{17}', false],
  ['30^\\circ', '30', true],
  ['30^\\circ', '30^{\\circ}', true],
  ['180^\\circ', '\\pi', false],
  ['\\$36', '36', true],
  ['\\$36', '36.00', true],
  ['\\$36', '\\$3.60', false],
  ['1,000', '1000', true],
  ['1,000', '1{,}000', true],
  ['1,000', '100', false],
  ['18', '\\text{18 dollars}', true],
  ['18', '18 dollars', true],
  ['18', '18\\text{ cm}', true],
  ['18', '\\$18.', true],
  ['18', '81', false],
  ['10\\%', '10', true],
  ['10\\%', '10 percent', true],
  ['10\\%', '0.1%', false],
  ['x^2+2x+1', '(x+1)^2', true],
  ['x^2+2x+1', '(x-1)^2', false],
  ['y = 2x+3', '2x+3', true],
  ['y = 2x+3', '3x+2', false],
  ['\\frac{\\sqrt{3}}{2}', '\\dfrac{\\sqrt3}{2}', true],
  ['\\frac{\\sqrt{3}}{2}', '\\frac{\\sqrt{2}}{2}', false],
  ['\\frac{\\sqrt{3}}{2}', '\\frac{\\sqrt{3}}{3}', false],
  ['\\frac{1}{3}', '0.333', false],
  ['\\frac{1}{3}', '1/3', true],
  ['\\frac{1}{3}', '\\tfrac{2}{6}', true],
  ['1, -2', '-2, 1', true],
  ['1, -2', '-2, 2', false],
  ['1, -2', '1', false],
  ['\\text{(C)}', 'C', true],
  ['\\text{(C)}', '(C)', true],
  ['\\text{(C)}', '(D)', false],
  ['11\\sqrt2', '\\sqrt{242}', true],
  ['11\\sqrt2', '\\sqrt{121}', false],
  ['-\\frac{3}{8}', '-0.375', true],
  ['-\\frac{3}{8}', '0.375', false],
  ['\\infty', '\\infty', true],
  ['(-\\infty, 3]', '(-\\infty,3]', true],
  ['(-\\infty, 3]', '(-\\infty,3)', false],
  ['\\{1,2\\}', '\\{2,1\\}', true],
  ['5', '', false],
  ['3', '4', false],
  ['070', '70', true],
  ['70', '700', false],
  ['\\sqrt{5}', '5^{1/2}', true],
  ['\\sqrt{5}', '5^{1/3}', false],
  ['3 \\sqrt{5}', '\\sqrt{45}', true],
  ['2\\sqrt{113}', '\\sqrt{452}', true],
  ['\\frac{243}{625}', '0.3888', true],
  ['\\frac{243}{625}', '0.389', false],
  ['1.25', '\\frac54', true],
  ['1.25', '1.2', false],
  ['x=5', 'x = 5.0', true],
  ['x=5', '5', true],
  ['x=5', 'x=-5', false],
  ['-256', '-2^8', true],
  ['-256', '256', false],
];

describe('math grader', () => {
  test('hand-checked pairs from MATH 500 answers: rewrites match, near misses do not', () => {
    const wrong = HAND.filter(([g, a, want]) => answersMatch(g, a) !== want);
    assert.deepEqual(wrong, [], `mis-graded: ${JSON.stringify(wrong)}`);
    assert.ok(HAND.length >= 80, `${HAND.length} pairs`);
  });

  test('GSM8K test answers: boxed surface rewrites match; off-by-one, ×10 and sign flips do not', () => {
    const golds = gsm8k.slice(0, 120);
    let pairs = 0;
    for (const g of golds) {
      const n = Number(g.replace(/,/g, ''));
      assert.ok(Number.isInteger(n), g);
      const plain = String(n);
      const withCommas = n.toLocaleString('en-US');
      const same = [
        `So the answer is $\\boxed{${plain}}$.`,
        `\\boxed{${plain}.0}`,
        `\\boxed{\\$${withCommas}}`,
        `\\boxed{${plain} \\text{ dollars}}`,
        `\\boxed{x = ${withCommas}}`,
      ];
      const misses = [`\\boxed{${n + 1}}`, `\\boxed{${n * 10}}`, `\\boxed{${n === 0 ? 1 : -n}}`, `${plain} without a box is not graded`];
      for (const s of same) assert.equal(gradeResponse(s, [g]).correct, true, `${g} vs ${s}`);
      for (const s of misses) assert.equal(gradeResponse(s, [g]).correct, false, `${g} vs ${s}`);
      pairs += same.length + misses.length;
    }
    assert.ok(pairs >= 1000, `${pairs} pairs`);
  });

  test('MATH 500 fractions a/b: equal as a/b, as a decimal (when exact), not when inverted or off by one', () => {
    let checked = 0;
    for (const g of math500) {
      const m = /^(-?)\\frac\{(\d+)\}\{(\d+)\}$/.exec(g);
      if (!m) continue;
      const [sign, a, b] = [m[1]!, Number(m[2]), Number(m[3])];
      assert.equal(answersMatch(g, `${sign}${a}/${b}`), true, g);
      const dec = (sign ? -a : a) / b;
      if (/^-?\d+\.\d{1,6}$/.test(String(dec))) assert.equal(answersMatch(g, String(dec)), true, `${g} vs ${dec}`);
      if (a !== b) assert.equal(answersMatch(g, `${sign}\\frac{${b}}{${a}}`), false, `${g} inverted`);
      assert.equal(answersMatch(g, `${sign}\\frac{${a + 1}}{${b}}`), false, `${g} off by one`);
      checked++;
    }
    assert.ok(checked >= 40, `${checked} fractions`);
  });

  test('every MATH 500 and AIME gold answer matches itself boxed inside a response', () => {
    const golds = [...math500, ...data('aime24.jsonl.gz').map((r) => String(r.answer)), ...data('aime25.jsonl').map((r) => String(r.answer))];
    const failed = golds.filter((g) => !gradeResponse(`Reasoning… so the answer is $\\boxed{${g}}$.`, [g]).correct);
    assert.deepEqual(failed, []);
  });

  test('lastBoxed: the last one, nested braces, \\fbox, the brace-less form, none', () => {
    assert.equal(lastBoxed('\\boxed{1} then \\boxed{\\frac{a}{\\sqrt{b}}} end'), '\\frac{a}{\\sqrt{b}}');
    assert.equal(lastBoxed('\\fbox{7}'), '7');
    assert.equal(lastBoxed('so \\boxed 5$.'), '5');
    assert.equal(lastBoxed('\\boxed{unclosed'), undefined);
    assert.equal(lastBoxed('no box'), undefined);
    assert.equal(normalizeMathAnswer('\\left( \\dfrac{1}{2}, 3 \\right)'), '( \\frac{1}{2}, 3 )');
  });

  test('trace-rl grade math: one {"correct"} per line in order; a malformed line is named, exit 2, no stdout', async () => {
    const rows = [
      { gold: '18', answer: 'so \\boxed{18.0}' },
      { gold: '\\frac12', answer: '0.5' },
      { gold: 3, answer: '4' },
      { gold: ['2', '-2'], answer: '\\boxed{-2}' },
    ];
    const [ok, bad, notJson] = await Promise.all([
      runCli(['grade', 'math'], rows.map((r) => JSON.stringify(r)).join('\n') + '\n'),
      runCli(['grade', 'math'], '{"gold":"1","answer":"1"}\n\n{"gold":"1"}\n'),
      runCli(['grade', 'math'], '{"gold":"1","answer":"1"}\n{oops\n'),
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(
      ok.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [{ correct: true }, { correct: true }, { correct: false }, { correct: true }],
    );
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /line 3: answer/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /line 2: not valid JSON/);
  });
});

/**
 * Numbers compare exactly where both sides are rational: a relative tolerance accepted 1000001 for
 * 1000000, 192000150 for a GSM8K gold of 192000000, and 0 for 1/2^20; the engine's canonical form
 * folded 1/2^80 and 3.7 × 10^-30 to 0.
 */
const EXACT: Array<[string, string, boolean]> = [
  ['1000000', '1000001', false],
  ['192000000', '192000150', false],
  ['192,000,000', '192000000.0', true],
  ['0', '\\frac{1}{2^{20}}', false],
  ['\\frac{1}{2^{20}}', '0', false],
  ['\\frac{1}{2^{20}}', '\\frac{1}{1048576}', true],
  ['0', '\\frac{1}{2^{80}}', false],
  ['0', '3.7\\times10^{-30}', false],
  ['3.7\\times 10^{-30}', '37 \\cdot 10^{-31}', true],
  ['12345678901234567890123', '12345678901234567890124', false],
  ['12345678901234567890123', '12345678901234567890123.0', true],
  ['(0, 1)', '(\\frac{1}{2^{80}}, 1)', false],
  ['(0, 1)', '(0.0, \\frac{2}{2})', true],
  ['\\frac{1}{3}', '0.3333333333', false],
  ['0.5', '\\frac{27}{50}', false],
  ['\\frac{9}{4}', '\\sqrt{\\frac{81}{16}}', true],
  ['-256', '-(2^8)', true],
  ['10^{100}', '10^{100}+1', false],
  // Irrational values: only the double's own rounding is forgiven.
  ['\\pi', '3.141593', false],
  ['\\sqrt{2}', '1.41421356', false],
  ['16\\sqrt{3}', '\\sqrt{768}', true],
  // A decimal gold approximates an irrational answer: equal when it rounds to the gold's places.
  ['2.24', '\\sqrt{5}', true],
  ['2.24', '\\sqrt{6}', false],
  ['3.14', '\\pi', true],
  ['3.14', '3.14159', false],
];

describe('math grader: exact numbers', () => {
  test('integers and rationals compare exactly; a tolerance only where a decimal gold approximates an irrational answer', () => {
    const wrong = EXACT.filter(([g, a, want]) => answersMatch(g, a) !== want);
    assert.deepEqual(wrong, [], `mis-graded: ${JSON.stringify(wrong)}`);
  });

  test('GSM8K golds: an answer one part in a million off is wrong, at any size', () => {
    let checked = 0;
    for (const g of gsm8k) {
      const n = Number(g.replace(/,/g, ''));
      if (n < 1000) continue;
      const near = String(n + Math.max(1, Math.round(n * 1e-6)));
      assert.equal(gradeResponse(`\\boxed{${near}}`, [g]).correct, false, `${g} vs ${near}`);
      checked++;
    }
    assert.ok(checked >= 100, `${checked} golds`);
  });
});

// The time bounds below catch a hang or a super-linear blow-up (an unbounded factorial, a quadratic list
// match), not a speed: they are 3–10× the old bounds, so a loaded CI machine does not fail them.
describe('math grader: bounded time, no crash (issue 31)', () => {
  const deep = `\\boxed{${'('.repeat(3000)}1${')'.repeat(3000)}}`;
  const list = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));

  test('a 3000-deep nesting and a huge factorial get a verdict with a reason, quickly', () => {
    for (const answer of [deep, '\\boxed{1000000000!}', '\\boxed{(10!)!}', '\\boxed{100000!}']) {
      const t = performance.now();
      const g = gradeDetailed(answer, ['1']);
      assert.equal(g.correct, false, answer.slice(0, 30));
      assert.ok(g.undecided && !g.undecided.includes('\n'), `${answer.slice(0, 30)}: ${g.undecided}`);
      assert.ok(performance.now() - t < 15_000, `${answer.slice(0, 30)}: ${performance.now() - t} ms`);
    }
    assert.equal(gradeDetailed('\\boxed{10!}', ['3628800']).correct, true, 'small factorials are still computed');
    assert.equal(gradeDetailed('\\boxed{((1))}', ['1']).correct, true, 'shallow nesting is still parsed');
  });

  test('a list against its reverse is matched in linear time: 10,000 elements', () => {
    for (const n of [1000, 10_000]) {
      const t = performance.now();
      assert.equal(answersMatch(list(n).join(', '), [...list(n)].reverse().join(', ')), true, `${n}`);
      assert.equal(answersMatch(list(n).join(', '), [...list(n).slice(1), '0'].join(', ')), false, `${n}, one element differs`);
      assert.ok(performance.now() - t < 10_000, `${n} elements: ${performance.now() - t} ms`);
    }
    // Elements written differently are still compared by value (a few of them).
    assert.equal(answersMatch('\\frac12, 3, 0.25', '0.25, 0.5, 3'), true);
  });

  test('trace-rl grade math: every line gets a verdict within bounded time, no stack trace, exit 0', async () => {
    const rows = [
      { gold: '1', answer: deep },
      { gold: '1', answer: '\\boxed{1000000000!}' },
      { gold: list(1000).join(', '), answer: `\\boxed{${[...list(1000)].reverse().join(', ')}}` },
      { gold: '2', answer: '\\boxed{2}' },
    ];
    const t = performance.now();
    const r = await runCli(['grade', 'math'], rows.map((x) => JSON.stringify(x)).join('\n') + '\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { correct: boolean; error?: string });
    assert.deepEqual(
      out.map((o) => o.correct),
      [false, false, true, true],
    );
    assert.match(out[0]!.error ?? '', /nest/);
    assert.match(out[1]!.error ?? '', /factorial/);
    assert.ok(performance.now() - t < 120_000, `${performance.now() - t} ms`);
  });
});
