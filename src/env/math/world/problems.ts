/**
 * Generated multi-step word problems with known solution programs (the math world). A problem starts
 * from a quantity and applies 1–4 operations, one sentence each, every operation using one new number
 * of the text: buying/finding more (+), giving away/losing (−), getting k times as many (×), sharing
 * equally among k and keeping one share (integer ÷, chosen to divide exactly). The answer is the final
 * quantity; difficulty is the number of operations. Seeded and reproducible.
 */
import type { Prompt } from '../../../tree/types.ts';
import { createRng, type Rng } from '../../../util/rng.ts';

export type WorldOp = '+' | '-' | '*' | '//';

export interface MathWorldProblem {
  id: string;
  question: string;
  /** The numbers in the order the text states them (the first is the starting quantity). */
  numbers: number[];
  /** ops[i] combines the running value with numbers[i + 1]. */
  ops: WorldOp[];
  answer: number;
}

const NAMES = ['Ada', 'Ben', 'Chloe', 'Dev', 'Ema', 'Femi', 'Gus', 'Hana', 'Ivan', 'Jia', 'Kofi', 'Lena'];
const ITEMS = ['marbles', 'stickers', 'apples', 'coins', 'stamps', 'shells', 'cards', 'pencils'];
const SENTENCES: Record<WorldOp, string[]> = {
  '+': ['Then {p} buys {n} more.', 'Later {p} finds {n} more.', 'A friend gives {o} {n} more.'],
  '-': ['Then {p} gives away {n}.', 'Later {p} loses {n}.', '{P} sells {n} of them.'],
  '*': ['Then {p} ends up with {n} times as many.', 'Later the pile grows to {n} times its size.'],
  '//': ['Then {p} shares them equally among {n} friends and keeps one share.', 'Later {p} splits them into {n} equal piles and keeps one pile.'],
};

export function applyOp(op: WorldOp, x: number, y: number): number {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '//':
      return Math.floor(x / y);
  }
}

function pickOp(rng: Rng, value: number): { op: WorldOp; n: number } {
  for (;;) {
    const op = (['+', '-', '*', '//'] as const)[rng.int(4)];
    if (op === '+') return { op, n: 2 + rng.int(40) };
    if (op === '-' && value > 3) return { op, n: 1 + rng.int(value - 2) };
    if (op === '*' && value <= 200) return { op, n: 2 + rng.int(4) };
    if (op === '//') {
      const divisors = [2, 3, 4, 5, 6].filter((d) => value % d === 0 && value / d >= 2);
      if (divisors.length > 0) return { op, n: divisors[rng.int(divisors.length)]! };
    }
  }
}

export function generateMathWorld(seed: number, count: number): MathWorldProblem[] {
  const rng = createRng(seed).fork('math-world');
  const out: MathWorldProblem[] = [];
  for (let i = 0; i < count; i++) {
    const steps = 1 + (i % 4);
    const name = NAMES[rng.int(NAMES.length)]!;
    const items = ITEMS[rng.int(ITEMS.length)]!;
    const p = name.length % 2 === 0 ? 'she' : 'he';
    const o = p === 'she' ? 'her' : 'him';
    let value = 6 + rng.int(60);
    const numbers = [value];
    const ops: WorldOp[] = [];
    const text = [`${name} has ${value} ${items}.`];
    for (let s = 0; s < steps; s++) {
      const { op, n } = pickOp(rng, value);
      const forms = SENTENCES[op];
      text.push(
        forms[rng.int(forms.length)]!.replace('{p}', p)
          .replace('{P}', p[0]!.toUpperCase() + p.slice(1))
          .replace('{o}', o)
          .replace('{n}', String(n)),
      );
      numbers.push(n);
      ops.push(op);
      value = applyOp(op, value, n);
    }
    text.push(`How many ${items} does ${name} have now?`);
    out.push({ id: `mw${seed}-${i}`, question: text.join(' '), numbers, ops, answer: value });
  }
  return out;
}

export interface MathWorldMeta {
  numbers: number[];
  ops: WorldOp[];
}

export function mathWorldPrompt(p: MathWorldProblem): Prompt {
  const meta: MathWorldMeta = { numbers: p.numbers, ops: p.ops };
  return { id: p.id, question: p.question, answers: [String(p.answer)], meta: { mathWorld: meta, dataset: 'math-world', steps: p.ops.length } };
}

export function mathWorldMeta(prompt: Prompt): MathWorldMeta {
  const m = prompt.meta?.mathWorld as MathWorldMeta | undefined;
  if (!m) throw new Error(`prompt ${prompt.id} is not a math-world problem (no meta.mathWorld)`);
  return m;
}
