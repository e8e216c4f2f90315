import { containsText, startsWithText, type OutputSignature } from '../store/own-output.ts';

/**
 * What `trace-rl export` writes, so a rerun may replace its earlier file and nothing else: Parquet
 * whose footer carries the `trace_rl.producer` key, JSONL whose first row starts with the row
 * columns (verl and TRL rows both begin step, prompt_id), or a prefix trie's meta line.
 */
export const EXPORT_OUTPUT: OutputSignature = {
  what: 'rows or a prefix trie written by trace-rl export',
  matches(head, tail) {
    if (startsWithText(head, 'PAR1')) return endsWithText(tail, 'PAR1') && containsText(tail, 'trace_rl.producer');
    if (startsWithText(head, '{"kind":"meta","form":"trace-rl-prefix-trie"')) return true;
    return /^\{"step":\d+,"prompt_id":"/.test(new TextDecoder().decode(head.subarray(0, 256)));
  },
};

function endsWithText(bytes: Uint8Array, text: string): boolean {
  return startsWithText(bytes.subarray(Math.max(0, bytes.length - text.length)), text);
}
