/**
 * The text protocols of tool-integrated math reasoning: how a model writes code and how the
 * interpreter's output comes back. One turn is reasoning, then either one code block (the action
 * `python`) or, with no code, a final answer in `\boxed{}` (the action `answer`).
 *  - `markdown`: a fenced ```python block; output comes back as a fenced ```output block (ToRA /
 *    Qwen2.5-Math TIR style);
 *  - `code-tag`: `<code>…</code>` (a fence inside is allowed); output as `<interpreter>…</interpreter>`
 *    (ReTool / SimpleTIR style);
 *  - `tool-call`: `<tool_call>{"name": "python", "arguments": {"code": "…"}}</tool_call>`; output as
 *    `<tool_response>…</tool_response>` (Hermes / Qwen function-calling style).
 * When a turn holds several code blocks the last one runs (models often quote code before the real
 * call). A turn with code is a code turn even if it also contains a `\boxed{}`.
 */
import type { Action } from '../../tree/types.ts';
import { lastBoxed } from './grader.ts';

export const CODE_FORMATS = ['markdown', 'code-tag', 'tool-call'] as const;
export type CodeFormat = (typeof CODE_FORMATS)[number];

/** The action type of a code turn. */
export const CODE_ACTION = 'python';

export interface CodeProtocol {
  readonly format: CodeFormat;
  /** Thought + action of one model turn; never throws (an unusable turn is an 'invalid' action naming the rule). */
  parse(text: string): { thought: string; action: Action };
  /** How the interpreter's output is shown to the model. */
  wrap(output: string): string;
  /** The instruction paragraph on how to call the interpreter. */
  instructions(): string;
  /** A code action written the way this protocol expects (for scripted policies and tests). */
  write(code: string): string;
}

const MARKDOWN = /```(?:python|py)[^\n]*\n([\s\S]*?)```/gi;
const CODE_TAG = /<code>\s*([\s\S]*?)\s*<\/code>/gi;
const TOOL_CALL = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/gi;

function lastMatch(re: RegExp, text: string): RegExpExecArray | undefined {
  let last: RegExpExecArray | undefined;
  for (const m of text.matchAll(re)) last = m as RegExpExecArray;
  return last;
}

function stripFence(code: string): string {
  const m = /^```[a-z]*\n([\s\S]*?)\n?```$/i.exec(code.trim());
  return m ? m[1]! : code;
}

function toolCallCode(body: string): string | { error: string } {
  let call: unknown;
  try {
    call = JSON.parse(body);
  } catch (e) {
    return { error: `the <tool_call> body is not JSON (${(e as Error).message})` };
  }
  const c = call as { name?: unknown; arguments?: unknown };
  const args = typeof c.arguments === 'string' ? safeJson(c.arguments) : c.arguments;
  const code = (args as { code?: unknown } | undefined)?.code;
  if (c.name !== 'python' && c.name !== 'code_interpreter') return { error: `unknown tool "${String(c.name)}"; the tool is python` };
  if (typeof code !== 'string') return { error: 'the python call needs arguments.code (a string)' };
  return code;
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

export function createProtocol(format: CodeFormat): CodeProtocol {
  const find = (text: string): { index: number; code: string } | { index: number; error: string } | undefined => {
    switch (format) {
      case 'markdown': {
        const m = lastMatch(MARKDOWN, text);
        return m && { index: m.index, code: m[1]! };
      }
      case 'code-tag': {
        const m = lastMatch(CODE_TAG, text);
        return m && { index: m.index, code: stripFence(m[1]!) };
      }
      case 'tool-call': {
        const m = lastMatch(TOOL_CALL, text);
        if (!m) return undefined;
        const code = toolCallCode(m[1]!);
        return typeof code === 'string' ? { index: m.index, code } : { index: m.index, error: code.error };
      }
    }
  };
  return {
    format,
    parse(text) {
      const found = find(text);
      if (found) {
        const thought = text.slice(0, found.index).trim();
        if ('error' in found) return { thought, action: { type: 'invalid', input: `bad_tool_call: ${found.error}` } };
        if (found.code.trim().length === 0) return { thought, action: { type: 'invalid', input: 'empty_code: the code block is empty' } };
        return { thought, action: { type: CODE_ACTION, input: found.code } };
      }
      const boxed = lastBoxed(text);
      if (boxed !== undefined && boxed.length > 0)
        return { thought: text.slice(0, text.lastIndexOf('\\boxed')).trim(), action: { type: 'answer', input: boxed } };
      return { thought: text.trim(), action: { type: 'invalid', input: `no_action: no code block and no \\boxed{} answer; ${hint(format)}` } };
    },
    wrap(output) {
      switch (format) {
        case 'markdown':
          return `\n\`\`\`output\n${output}\n\`\`\`\n`;
        case 'code-tag':
          return `\n<interpreter>\n${output}\n</interpreter>\n`;
        case 'tool-call':
          return `\n<tool_response>\n${output}\n</tool_response>\n`;
      }
    },
    instructions() {
      return `You can run Python (standard library) to compute: ${hint(format)} Only what the code prints is shown back. When you know the final answer, write it as \\boxed{answer} with no code in that turn.`;
    },
    write(code) {
      switch (format) {
        case 'markdown':
          return `\`\`\`python\n${code}\n\`\`\``;
        case 'code-tag':
          return `<code>\n${code}\n</code>`;
        case 'tool-call':
          return `<tool_call>${JSON.stringify({ name: 'python', arguments: { code } })}</tool_call>`;
      }
    },
  };
}

function hint(format: CodeFormat): string {
  switch (format) {
    case 'markdown':
      return 'write the code in a ```python fenced block and end your turn there.';
    case 'code-tag':
      return 'write the code between <code> and </code> and end your turn there.';
    case 'tool-call':
      return 'call <tool_call>{"name": "python", "arguments": {"code": "..."}}</tool_call> and end your turn there.';
  }
}
