/**
 * The budget ledger: every generation is reserved here before it happens, so a step can never spend
 * more than its caps (the check is a reservation, not an after-the-fact report). Units: trajectories
 * (bare and continuation), policy calls (turns), generated tokens, tool calls.
 */

export type TrajectoryKind = 'bare' | 'continuation';

export interface Spend {
  bare: number;
  continuation: number;
  turns: number;
  tokens: number;
  toolCalls: number;
}

export interface Caps {
  trajectories?: number;
  turns?: number;
  tokens?: number;
}

/** Thrown only on misuse (settling twice, negative amounts); running out of budget is a `false` return. */
export class LedgerError extends Error {
  override name = 'LedgerError';
}

export function emptySpend(): Spend {
  return { bare: 0, continuation: 0, turns: 0, tokens: 0, toolCalls: 0 };
}

export function trajectories(s: Spend): number {
  return s.bare + s.continuation;
}

/** A held reservation for one policy call: at most `maxTokens` tokens, settled with the real count. */
export interface TurnReservation {
  readonly maxTokens: number;
  settle(generatedTokens: number): void;
  release(): void;
}

/**
 * One reserved call. A small object rather than closures over the ledger: the engine makes one a
 * policy call, and at thousands of calls a second their allocations add to the garbage collector's work.
 */
class Reservation implements TurnReservation {
  private open = true;

  constructor(
    private readonly unreserve: (maxTokens: number, generated: number | undefined) => void,
    readonly maxTokens: number,
  ) {}

  settle(generated: number): void {
    if (!(generated >= 0) || generated > this.maxTokens) {
      throw new LedgerError(`generated tokens ${generated} outside the reserved [0, ${this.maxTokens}]`);
    }
    this.close(generated);
  }

  release(): void {
    this.close(undefined);
  }

  private close(generated: number | undefined): void {
    if (!this.open) throw new LedgerError('turn reservation already settled or released');
    this.open = false;
    this.unreserve(this.maxTokens, generated);
  }
}

export class BudgetLedger {
  readonly caps: Readonly<Caps>;
  private spent = emptySpend();
  private reservedTurns = 0;
  private reservedTokens = 0;
  /** Calls waiting in `reserveTurn` for reservations held by other calls to settle (FIFO). */
  private readonly waiting: Array<() => void> = [];

  constructor(caps: Caps = {}) {
    for (const [k, v] of Object.entries(caps)) {
      if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new LedgerError(`cap "${k}" must be a non-negative number, got ${v}`);
    }
    this.caps = { ...caps };
  }

  /** What has been spent so far (settled amounts only). */
  spend(): Spend {
    return { ...this.spent };
  }

  /** What is left under the cap of `unit` (Infinity without one); reserved turns and tokens count as spent. */
  remaining(unit: 'trajectories' | 'turns' | 'tokens'): number {
    if (unit === 'trajectories') return this.remainingTrajectories();
    if (unit === 'turns') return (this.caps.turns ?? Infinity) - this.spent.turns - this.reservedTurns;
    return (this.caps.tokens ?? Infinity) - this.spent.tokens - this.reservedTokens;
  }

  remainingTrajectories(): number {
    return (this.caps.trajectories ?? Infinity) - trajectories(this.spent);
  }

  /** Claims one trajectory; false when the trajectory cap is reached. */
  tryStartTrajectory(kind: TrajectoryKind): boolean {
    if (this.remainingTrajectories() < 1) return false;
    this.spent[kind] += 1;
    return true;
  }

  /** Returns a trajectory claim that never generated anything (e.g. cancelled before its first call). */
  refundTrajectory(kind: TrajectoryKind): void {
    if (this.spent[kind] < 1) throw new LedgerError(`no ${kind} trajectory to refund`);
    this.spent[kind] -= 1;
  }

  /**
   * Reserves one policy call that may generate up to `maxTokens` tokens. Returns null when the turn or
   * token cap cannot cover it; the caller must then end the trajectory (reason 'budget').
   */
  tryReserveTurn(maxTokens: number): TurnReservation | null {
    if (!(maxTokens >= 0)) throw new LedgerError(`maxTokens must be non-negative, got ${maxTokens}`);
    const turnsLeft = (this.caps.turns ?? Infinity) - this.spent.turns - this.reservedTurns;
    const tokensLeft = (this.caps.tokens ?? Infinity) - this.spent.tokens - this.reservedTokens;
    if (turnsLeft < 1 || tokensLeft < maxTokens) return null;
    this.reservedTurns += 1;
    this.reservedTokens += maxTokens;
    return new Reservation(this.unreserve, maxTokens);
  }

  /** A reservation of `maxTokens` ends: `generated` tokens spent (undefined when released unspent). One function per ledger, shared by its reservations. */
  private readonly unreserve = (maxTokens: number, generated: number | undefined): void => {
    this.reservedTurns -= 1;
    this.reservedTokens -= maxTokens;
    if (generated !== undefined) {
      this.spent.turns += 1;
      this.spent.tokens += generated;
    }
    // Every waiting call looks again (they re-check in FIFO order; those that still do not fit wait on).
    if (this.waiting.length > 0) for (const wake of this.waiting.splice(0)) wake();
  };

  /**
   * Like tryReserveTurn, but a call that would fit once the reservations other calls hold are settled
   * waits for them instead of being refused: a call reserves `maxTokens` and usually settles far fewer,
   * so near a token cap a refusal would end trajectories the budget can still pay for. Resolves null
   * only when the call cannot fit even if every pending reservation settled at zero, or on `signal`.
   */
  async reserveTurn(maxTokens: number, signal?: AbortSignal): Promise<TurnReservation | null> {
    for (;;) {
      const r = this.tryReserveTurn(maxTokens);
      if (r) return r;
      const couldFit = (this.caps.turns ?? Infinity) - this.spent.turns >= 1 && (this.caps.tokens ?? Infinity) - this.spent.tokens >= maxTokens;
      const pending = this.reservedTurns > 0;
      if (!couldFit || !pending || signal?.aborted) return null;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener('abort', wake);
          const i = this.waiting.indexOf(wake);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  recordToolCall(): void {
    this.spent.toolCalls += 1;
  }

  /**
   * Adds what another ledger settled for a part of this step (a worker process's prompts), so the
   * totals and what remains are the step's. Refused when it would pass a cap: the part was given
   * more than this ledger had left.
   */
  absorb(part: Spend): void {
    for (const [k, v] of Object.entries(part)) if (!Number.isFinite(v) || v < 0) throw new LedgerError(`spend "${k}" must be a non-negative number, got ${v}`);
    const after = { ...this.spent };
    for (const k of Object.keys(after) as Array<keyof Spend>) after[k] += part[k];
    const over =
      trajectories(after) > (this.caps.trajectories ?? Infinity)
        ? 'trajectories'
        : after.turns > (this.caps.turns ?? Infinity)
          ? 'turns'
          : after.tokens > (this.caps.tokens ?? Infinity)
            ? 'tokens'
            : undefined;
    if (over) throw new LedgerError(`absorbing ${JSON.stringify(part)} would pass the ${over} cap of ${this.caps[over]}`);
    this.spent = after;
  }
}
