/** A worker's share of a root plan: [prompt id, m] pairs, in plan order. */
export type Share = Array<[string, number]>;

/**
 * Splits a root plan into `n` shares of about equal weight (`weight(m)`: what a prompt with m bare
 * rollouts may spend, its continuations included): heaviest prompts first, each to the lightest
 * share so far (ties: the lower index), then each share back in plan order. Depends only on the plan,
 * so the same plan always gives the same shares. Prompts with m = 0 run nowhere and are left out.
 */
export function partitionPlan(plan: ReadonlyMap<string, number>, n: number, weight: (m: number) => number): Share[] {
  const order = [...plan].map(([id, m], i) => ({ id, m, i, w: weight(m) })).filter((x) => x.m > 0);
  const load = new Array<number>(n).fill(0);
  const owner = new Map<string, number>();
  for (const x of [...order].sort((a, b) => b.w - a.w || a.i - b.i)) {
    let best = 0;
    for (let k = 1; k < n; k++) if (load[k]! < load[best]!) best = k;
    load[best]! += x.w;
    owner.set(x.id, best);
  }
  const shares: Share[] = Array.from({ length: n }, () => []);
  for (const x of order) shares[owner.get(x.id)!]!.push([x.id, x.m]);
  return shares;
}
