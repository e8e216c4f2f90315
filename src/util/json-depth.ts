/**
 * How deep a JSON text nests, found by scanning it before it is parsed: a peer's answer nested
 * 100,000 deep parses, but every recursive walk over the value afterwards (JSON.stringify, a schema
 * check, a deep copy) overflows the stack. The scan skips strings (brackets inside them do not count)
 * and stops at the first level past the bound.
 */
export function jsonNestingPast(text: string, maxDepth: number): { at: number } | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return { at: i };
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}
