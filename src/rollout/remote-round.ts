import type { RootCandidate } from '../allocate/types.ts';
import type { Spend } from '../budget/index.ts';
import type { ServerLoad } from '../env/types.ts';
import type { RolloutTree, TurnError } from '../tree/index.ts';
import type { Progress } from './events.ts';
import type { ReplayCost, ReplayMismatches } from './replay-counts.ts';

/**
 * Phases 2–3 of round 0 run somewhere else (worker processes: split/split-step.ts). The engine plans
 * the roots, hands the plan over, and takes back each planned prompt's finished tree and what the
 * trees cost; the leftover top-up then runs here on the merged trees.
 */
export interface RemoteRound {
  run(round: RemoteRoundInput): Promise<RemoteRoundOutcome>;
}

export interface RemoteRoundInput {
  /** Round 0's root plan (prompt id → m ≥ 0). */
  plan: ReadonlyMap<string, number>;
  /** The candidates the plan was made over (their Ṽ is stored on each root as `predicted`). */
  candidates: readonly RootCandidate[];
  /** Round 0's importance weights, where the root planner has them. */
  weights?: ReadonlyMap<string, number>;
  /**
   * A budget in turns or tokens: the planned price of a bare rollout and what the step's ledger has
   * left in that unit, which the parts share out as their own caps (absent in trajectories).
   */
  price?: { unit: 'turns' | 'tokens'; root: number; available: number };
  signal: AbortSignal;
  /** While the parts run: their counts so far, summed (for progress; the outcome's `progress` is final). */
  onProgress?: (parts: Progress) => void;
}

export interface RemoteRoundOutcome {
  /** One finished tree per prompt of the plan with m > 0 (none of a part cancelled by `signal`). */
  trees: RolloutTree[];
  /** What those trees cost, summed over the parts. */
  spend: Spend;
  progress: Progress;
  failures: Partial<Record<TurnError['code'], number>>;
  replayMismatches: ReplayMismatches;
  replayCost: ReplayCost;
  /** What the parts' own environments sent their servers, summed (absent for in-process environments). */
  serverLoad?: ServerLoad;
}
