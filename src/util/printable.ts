/**
 * Text a peer sent (an engine's error, a path it chose), made safe to print on one line: control
 * characters (newlines, escape sequences that would move the cursor or recolour a terminal, C1 codes,
 * the line and paragraph separators) are written as `\uXXXX`, so a peer cannot forge extra log lines
 * or rewrite what a user sees.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
