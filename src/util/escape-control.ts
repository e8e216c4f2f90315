/**
 * Foreign text (what a server, a model or a user's file sent) made safe to print on one terminal line:
 * every control character is written as a visible escape, so a server's message cannot set the window
 * title (`ESC]0;…`), erase and forge a line (`CR ESC[2K`), ask the terminal to type into the user's
 * shell (`ESC[6n`), break the one-line message (`\n`) or reorder what is shown (bidi overrides).
 * Escaped: C0 (U+0000–U+001F, so also TAB, CR and LF), DEL, C1 (U+0080–U+009F: U+009B is a one-byte
 * CSI on some terminals), the line and paragraph separators and the bidirectional embeddings,
 * overrides and isolates. The backslash itself is left alone: the output is for reading, not parsing.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? escapeCode(c.charCodeAt(0)));
}

function escapeCode(code: number): string {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
