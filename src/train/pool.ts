import type { Prompt } from '../tree/types.ts';
import { createRng, shuffled } from '../util/rng.ts';

/**
 * The step's candidate pool: the training prompts in a seeded order that is reshuffled every epoch,
 * `size` at a time, so every prompt is seen once per epoch and step s's pool depends only on (seed, s).
 */
export function drawPool(train: readonly Prompt[], size: number, step: number, seed: number): Prompt[] {
  const n = train.length;
  const k = Math.min(size, n);
  const out: Prompt[] = [];
  const seen = new Set<string>();
  const orders = new Map<number, Prompt[]>();
  // Positions [step·k, step·k + k) of the endless sequence of epoch shuffles; a pool that straddles two
  // epochs skips prompts it already holds and reads on, so a pool never repeats a prompt.
  for (let flat = step * k; out.length < k; flat++) {
    const epoch = Math.floor(flat / n);
    let order = orders.get(epoch);
    if (!order) orders.set(epoch, (order = shuffled(train, createRng(seed).fork(`epoch/${epoch}`))));
    const p = order[flat % n];
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    out.push(p);
  }
  return out;
}
