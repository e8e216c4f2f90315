/** Python str methods whose JavaScript look-alikes differ (line breaks, whitespace, code points). */

const LINE_BREAKS = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** str.splitlines(): splits on every Unicode line boundary; no trailing empty line. */
export function splitlines(s: string): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > 0) {
    const m = LINE_BREAKS.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    out.push(rest.slice(0, m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

const PY_SPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** str.split() with no separator: runs of whitespace, no empty strings. */
export function splitWhitespace(s: string): string[] {
  return s.split(PY_SPACE).filter((w) => w.length > 0);
}

/** len(s) counts code points. */
export const pyLen = (s: string): number => [...s].length;

/** str.rstrip(chars) / str.strip(chars). */
export function rstripChars(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1] as string)) end--;
  return s.slice(0, end);
}

export function stripChars(s: string, chars: string): string {
  let start = 0;
  while (start < s.length && chars.includes(s[start] as string)) start++;
  return rstripChars(s.slice(start), chars);
}
