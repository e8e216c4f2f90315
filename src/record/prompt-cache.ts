/**
 * One line on what the trees' shared prefixes and a Tinker engine's prefix cache did for a policy's
 * samples, from the metrics a tinker policy logs (record/metrics.ts): read by `report` (summed over a
 * run) and `diagnose` (its one step).
 */
export function promptCacheLine(m: Readonly<Record<string, number | undefined>>): string {
  const sent = m.tinker_prompt_tokens ?? 0;
  const shared = m.tinker_prompt_shared_tokens ?? 0;
  const hits = m.tinker_prompt_cache_hit_tokens;
  const share = (n: number) => (sent > 0 ? ` (${((100 * n) / sent).toFixed(1)}%)` : '');
  return `prompt tokens sent to the engine: ${sent}; in the trees' shared prefixes: ${shared}${share(shared)}; ${
    hits === undefined
      ? 'the engine reports no prefix-cache hits (prompt_cache_hit_tokens)'
      : `taken from the engine's prefix cache, as it reports: ${hits}${share(hits)}`
  }`;
}
