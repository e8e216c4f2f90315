/**
 * Text helpers for prefix features: tokenisation and answer normalisation. Pure and deterministic.
 */

/** Words: runs of letters/digits; a decimal number ("0.73") stays one token. Lower-cased. */
const WORD = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{N}]+/gu;

/** Lower-cased word tokens of `text`, at most `limit` of them (long observations are cut for speed). */
export function tokenize(text: string, limit = Infinity): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    out.push(m[0]);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The question's template: its word tokens with the names taken out, so a question's features say what
 * is asked, not about whom. A name is a capitalised word that does not open the text, or a number; a
 * run of names becomes one placeholder ("Who directed Silent Harbor 2?" → who directed <name>,
 * "Simulated task sim-1-5." → simulated task sim <num>). Other words are lower-cased as in tokenize.
 */
export function templateTokens(text: string, limit = Infinity): string[] {
  const out: string[] = [];
  let first = true;
  for (const m of text.matchAll(WORD)) {
    const w = m[0];
    const name = isNumber(w) ? '<num>' : !first && /^\p{Lu}/u.test(w) ? '<name>' : undefined;
    first = false;
    if (name === undefined) out.push(w.toLowerCase());
    else if (out[out.length - 1] !== name && out[out.length - 1] !== '<name>') out.push(name);
    if (out.length >= limit) break;
  }
  return out;
}

/** True for a token that is a number ("3", "0.73"). */
export function isNumber(token: string): boolean {
  return /^\p{N}+(?:[.,]\p{N}+)*$/u.test(token);
}

/**
 * A coarse form of a number token, so nearby values share a feature: numbers in [0, 1] are rounded
 * to one decimal ("0.73" → "~0.7"); others keep their order of magnitude ("1834" → "~1e3").
 */
export function coarseNumber(token: string): string {
  const x = Number(token.replace(',', '.'));
  if (!Number.isFinite(x)) return '~nan';
  if (x >= 0 && x <= 1) return `~${(Math.round(x * 10) / 10).toFixed(1)}`;
  return `~1e${Math.floor(Math.log10(Math.abs(x) || 1))}`;
}

const ARTICLES = new Set(['a', 'an', 'the']);

/** Normalised token string for containment checks (lower case, no punctuation, no articles). */
export function normalizedText(text: string): string {
  return ` ${tokenize(text)
    .filter((t) => !ARTICLES.has(t))
    .join(' ')} `;
}
