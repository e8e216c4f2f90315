/**
 * The math world's in-process code tool: runs exactly the cells the world's candidate actions are made
 * of, `print(A op B)` with integer A, B and op in + - * //, with Python's semantics (// floors toward
 * −∞, integers are exact: BigInt). Anything else is refused with an error observation. It exists
 * because a pyodide call per step costs milliseconds and an embedded training run makes tens of
 * thousands of them (measured per step); the pyodide tool runs the
 * same cells with the same output.
 */
import type { CodeResult, CodeTool } from '../code-tool.ts';

const CELL = /^print\((-?\d+) (\+|-|\*|\/\/) (-?\d+)\)$/;

export function evaluateCell(code: string): bigint | undefined {
  const m = CELL.exec(code.trim());
  if (!m) return undefined;
  const a = BigInt(m[1]!);
  const b = BigInt(m[3]!);
  switch (m[2]) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    default: {
      if (b === 0n) return undefined;
      const q = a / b;
      return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
    }
  }
}

export class InlineArithmeticTool implements CodeTool {
  readonly name = 'inline';

  async run(code: string): Promise<CodeResult> {
    const v = evaluateCell(code);
    if (v === undefined)
      return { status: 'error', stdout: '', stderr: '', error: 'the inline tool runs only print(a op b) with integers a, b and op in + - * //', ms: 0 };
    return { status: 'ok', stdout: `${v}\n`, stderr: '', ms: 0 };
  }

  async close(): Promise<void> {}
}
