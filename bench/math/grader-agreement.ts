/**
 * Agreement of the math grader with PRM800K's reference grader (`grading/grader.py` of the PRM800K
 * repository, sympy-based, strict: equal only when the difference simplifies to 0) on answer pairs.
 *   npx tsx bench/math/grader-agreement.ts --reference DIR [--pairs pairs.jsonl] [--out result.json]
 * DIR holds PRM800K's `grading` package (grader.py, math_normalize.py, an __init__.py); it needs a
 * python3 with sympy and pylatexenc (Debian: python3-sympy python3-pylatexenc). Without --pairs the
 * pairs are made from the gold answers of MATH 500 and GSM8K test: each gold against itself, surface
 * rewrites, near misses (±1, ×10, one part in a million, an inverted fraction, a decimal of a fraction)
 * and another problem's gold. Prints the agreement and every disagreement; writes them to --out.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { answersMatch } from '../../src/env/math/grader.ts';
import { readTextFile } from '../../src/util/bounded-read.ts';

const { values } = parseArgs({
  options: {
    reference: { type: 'string' },
    pairs: { type: 'string' },
    out: { type: 'string' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
if (!values.reference) throw new Error('--reference DIR (the folder holding PRM800K grading/) is required');

interface Pair {
  gold: string;
  answer: string;
}

const rows = (f: string) =>
  readTextFile(f)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const data = (f: string) => rows(fileURLToPath(new URL(`../../data/math/${f}`, import.meta.url)));

function madePairs(): Pair[] {
  const math500 = data('math500.jsonl.gz').map((r) => String(r.answer));
  const gsm8k = data('gsm8k-test.jsonl.gz').map((r) => String(r.answer).split('####').pop()!.trim());
  const pairs: Pair[] = [];
  const golds = [...math500, ...gsm8k.slice(0, 500)];
  golds.forEach((gold, i) => {
    const add = (answer: string) => pairs.push({ gold, answer });
    add(gold);
    add(gold.replace(/\\dfrac/g, '\\frac').replace(/\s+/g, ''));
    add(golds[(i * 7 + 13) % golds.length]!);
    const plain = gold.replace(/,/g, '');
    if (/^-?\d+$/.test(plain)) {
      const n = BigInt(plain);
      add(`${n + 1n}`);
      add(`${n * 10n}`);
      add(`${plain}.0`);
      const million = n / 1_000_000n;
      if (million !== 0n) add(`${n + million}`);
    }
    const frac = /^(-?)\\frac\{(\d+)\}\{(\d+)\}$/.exec(gold);
    if (frac) {
      const [, sign, a, b] = frac;
      add(`${sign}${a}/${b}`);
      add(`${sign}\\frac{${b}}{${a}}`);
      add(String((sign ? -1 : 1) * (Number(a) / Number(b))));
      add(((sign ? -1 : 1) * (Number(a) / Number(b))).toFixed(3));
    }
    if (/^-?\d*\.\d+$/.test(gold)) {
      add(String(Number(gold) + 10 ** -(gold.split('.')[1]!.length + 3)));
    }
  });
  return pairs;
}

const pairs: Pair[] = values.pairs ? rows(values.pairs).map((r) => ({ gold: String(r.gold), answer: String(r.answer) })) : madePairs();

// The reference, one verdict per pair; sympy can hang, so each pair gets 5 s (then it is not equal,
// as the reference's own `except` would have it).
const program = `
import json, signal, sys
sys.path.insert(0, sys.argv[1])
from grading.grader import grade_answer
def alarm(*_): raise TimeoutError()
signal.signal(signal.SIGALRM, alarm)
for line in sys.stdin:
    p = json.loads(line)
    signal.alarm(5)
    try:
        v = bool(grade_answer(p["answer"], p["gold"]))
    except Exception:
        v = False
    signal.alarm(0)
    print(json.dumps(v), flush=True)
`;
const ref = spawnSync(values.python!, ['-c', program, values.reference], {
  input: pairs.map((p) => JSON.stringify(p)).join('\n') + '\n',
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
if (ref.status !== 0) throw new Error(`reference grader failed: ${ref.stderr.slice(-2000)}`);
const theirs = ref.stdout
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as boolean);
if (theirs.length !== pairs.length) throw new Error(`reference answered ${theirs.length} of ${pairs.length} pairs`);

const ours = pairs.map((p) => answersMatch(p.gold, p.answer));
const disagreements = pairs.flatMap((p, i) => (ours[i] === theirs[i] ? [] : [{ ...p, ours: ours[i], reference: theirs[i] }]));
const agreement = 1 - disagreements.length / pairs.length;
for (const d of disagreements) console.log(JSON.stringify(d));
const summary = {
  pairs: pairs.length,
  equalByReference: theirs.filter(Boolean).length,
  equalByOurs: ours.filter(Boolean).length,
  disagreements: disagreements.length,
  ourAcceptsReferenceRejects: disagreements.filter((d) => d.ours).length,
  agreement: +agreement.toFixed(4),
};
console.log(JSON.stringify(summary));
if (values.out) writeFileSync(values.out, JSON.stringify({ summary, disagreements }, null, 2) + '\n');
