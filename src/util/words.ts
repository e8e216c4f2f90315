/**
 * Lower-case words of a text and the function words that carry no content: what the embedded policy's
 * features and environments' own features read from questions and passages.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'the',
  'a',
  'an',
  'of',
  'in',
  'is',
  'was',
  'by',
  'at',
  'which',
  'what',
  'who',
  'where',
  'did',
  'does',
  'or',
  'and',
  'to',
  'on',
  'that',
  'it',
]);

export function words(s: string): string[] {
  return s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}
