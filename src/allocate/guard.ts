/**
 * The guard of the `guarded` strategy: how much of a step the solver may spend, moved only on evidence.
 *
 * Each step splits into a base part, grpo's own plan on (1 − s) of the budget, and an explore part, the
 * solver's choices on the share s. After the step each part's yield is counted: distinct prompts whose
 * tree ended mixed, per unit of budget it spent there. The explore share starts at ε and climbs one rung
 * (ε, 2ε, … up to sMax) only when a one-sided test says the explore part's yield is higher than the
 * base's; it falls back to ε when the test says lower. Evidence accumulates from the last change.
 *
 * The test is the exact conditional test of two Poisson rates: given X = x_e + x_b mixed prompts over
 * costs c_e and c_b, under equal rates x_e ~ Binomial(X, c_e / (c_e + c_b)). It is repeated after every
 * step, so the n-th look since a change is run at α_n = α · 6 / (π² n²): Σ α_n = α, and by the union
 * bound the chance that equal yields ever move the share, between two changes, is at most α.
 *
 * Worst case against grpo: while s = ε the base part is grpo's plan at (1 − ε) of the budget, whatever
 * the solver does, so a step keeps at least (1 − ε) of grpo's distinct prompts (and their chance to be
 * mixed); s rises above ε only on a passed test, false with probability at most α.
 */

/** The guard's settings (the strategy's options). */
export interface GuardOptions {
  /** ε: the explore share at the start and the floor it returns to. */
  explore: number;
  /** Most of a step the explore part may take. */
  maxShare: number;
  /** Family-wise level α of the sequential test between two changes of the share. */
  alpha: number;
}

/** What a step's parts produced: distinct mixed prompts and the cost they took, in the budget's unit. */
export interface PartYield {
  mixed: number;
  cost: number;
}

/** The guard's state, carried from step to step in the run state (JSON). */
export interface GuardState {
  share: number;
  /** Counts since the last change of the share. */
  base: PartYield;
  explore: PartYield;
  /** Tests run since the last change (n of α_n). */
  looks: number;
}

export function initialGuard(o: GuardOptions): GuardState {
  return { share: o.explore, base: { mixed: 0, cost: 0 }, explore: { mixed: 0, cost: 0 }, looks: 0 };
}

/** α_n = α · 6 / (π² n²), n ≥ 1: the levels sum to α over every look. */
export function spentAlpha(alpha: number, look: number): number {
  return (alpha * 6) / (Math.PI ** 2 * look ** 2);
}

/**
 * P(X ≥ k) for X ~ Binomial(n, p), summed in log space from the larger end so that tiny tails stay
 * exact to rounding (n up to a few thousand prompts).
 */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const logs: number[] = [];
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  for (let i = k; i <= n; i++) logs.push(logChoose(n, i) + i * lp + (n - i) * lq);
  const max = Math.max(...logs);
  return Math.min(1, Math.exp(max) * logs.reduce((s, l) => s + Math.exp(l - max), 0));
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

const factorials: number[] = [0];
function logFactorial(n: number): number {
  for (let i = factorials.length; i <= n; i++) factorials.push(factorials[i - 1]! + Math.log(i));
  return factorials[n]!;
}

/**
 * One-sided p-values of "the explore part's yield is higher" and "… is lower", by the conditional
 * binomial test of two rates. 1 when either part has spent nothing (no evidence).
 */
export function yieldTest(base: PartYield, explore: PartYield): { higher: number; lower: number } {
  if (base.cost <= 0 || explore.cost <= 0) return { higher: 1, lower: 1 };
  const n = base.mixed + explore.mixed;
  const p = explore.cost / (explore.cost + base.cost);
  return { higher: binomialUpperTail(explore.mixed, n, p), lower: binomialUpperTail(base.mixed, n, 1 - p) };
}

/** The state after a step whose parts yielded `base` and `explore`. */
export function nextGuard(state: GuardState, step: { base: PartYield; explore: PartYield }, o: GuardOptions): GuardState {
  const base = add(state.base, step.base);
  const explore = add(state.explore, step.explore);
  const looks = state.looks + 1;
  const { higher, lower } = yieldTest(base, explore);
  const level = spentAlpha(o.alpha, looks);
  const reset = (share: number): GuardState => ({ share, base: { mixed: 0, cost: 0 }, explore: { mixed: 0, cost: 0 }, looks: 0 });
  if (higher <= level && state.share < o.maxShare) return reset(Math.min(o.maxShare, round(state.share + o.explore)));
  if (lower <= level && state.share > o.explore) return reset(o.explore);
  return { share: state.share, base, explore, looks };
}

const add = (a: PartYield, b: PartYield): PartYield => ({ mixed: a.mixed + b.mixed, cost: a.cost + b.cost });
/** Shares are multiples of ε; rounding keeps 3 × 0.1 from drifting to 0.30000000000000004. */
const round = (x: number) => Math.round(x * 1e9) / 1e9;

/** The guard's metrics: the share its solver part had, and each part's distinct mixed prompts per 1,000 units of budget. */
export function guardMetrics(share: number, y: { base: PartYield; explore: PartYield }): Record<string, number> {
  const per1000 = (p: PartYield) => (p.cost > 0 ? (1000 * p.mixed) / p.cost : 0);
  return { guard_share: share, guard_base_yield: per1000(y.base), guard_explore_yield: per1000(y.explore) };
}

/** A guard state read back from a run's stored state (undefined: none stored); a malformed one fails, naming what is wrong. */
export function storedGuard(x: unknown): GuardState | undefined {
  if (x === undefined) return undefined;
  const g = x as Partial<GuardState>;
  const part = (p: unknown) => typeof p === 'object' && p !== null && Number.isFinite((p as PartYield).mixed) && Number.isFinite((p as PartYield).cost);
  if (typeof g !== 'object' || g === null || !(Number(g.share) > 0 && Number(g.share) <= 1) || !part(g.base) || !part(g.explore) || !Number.isInteger(g.looks))
    throw new RangeError(
      `the run state's guard is not a guard state (share in (0, 1], base and explore {mixed, cost}, looks an integer): ${JSON.stringify(x).slice(0, 200)}`,
    );
  return g as GuardState;
}
