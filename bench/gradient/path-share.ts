import type { Turn } from '../../src/tree/types.ts';

/**
 * The share of a prompt's outcome variance that its actions before the last turn explain: rollouts are
 * grouped by the actions they took before their final one, and the between-group share of the reward's
 * variance is read with the usual small-group correction (ω²: SSB − (G − 1)·MSW over SST, at least 0),
 * so groups of one rollout explain nothing by themselves. NaN when it cannot be read: fewer than 3 rollouts,
 * no variance, or every rollout on a path of its own.
 *
 * Why: a question whose outcome is settled by the path (which passages were read) has contrast the
 * policy's choices make; one whose path is the same for success and failure and whose last step is a
 * coin flip (a comparison the features cannot express) has contrast no choice before it explains. A
 * root value "P(mixed) × this share" counts learnable contrast; a predictor could estimate the share from
 * the spread of its own prefix predictions before the last turn.
 */
export function pathShare(samples: ReadonlyArray<{ reward: number; turns: readonly Turn[] }>): number {
  const n = samples.length;
  if (n < 3) return Number.NaN;
  const mean = samples.reduce((a, s) => a + s.reward, 0) / n;
  const groups = new Map<string, { sum: number; n: number }>();
  let sst = 0;
  for (const s of samples) {
    sst += (s.reward - mean) ** 2;
    const key = s.turns
      .slice(0, -1)
      .map((t) => `${t.action.type}\u0000${t.action.input}`)
      .join('\u0001');
    const g = groups.get(key) ?? { sum: 0, n: 0 };
    g.sum += s.reward;
    g.n++;
    groups.set(key, g);
  }
  if (sst === 0) return Number.NaN;
  let ssb = 0;
  for (const g of groups.values()) ssb += g.n * (g.sum / g.n - mean) ** 2;
  const G = groups.size;
  // Every rollout on its own path: nothing says how much of the variance is within a path.
  if (G === n) return Number.NaN;
  const msw = (sst - ssb) / (n - G);
  return Math.max(0, (ssb - (G - 1) * msw) / sst);
}
