/**
 * The seeded train / held-out split of QA datasets, and the training mixture.
 *  - Each dataset is shuffled with its own stream (seed, dataset name), so adding a dataset never
 *    changes another's split; the first round(n · testFraction) questions are held out (at least one).
 *  - An evaluation-only dataset is held out entirely.
 *  - The training mixture takes round(weight · n_train) of a dataset's training questions: the first
 *    ones of its shuffled order for weight < 1, and for weight > 1 whole extra passes over them whose
 *    copies get ids `<id>~<pass>` (prompt ids stay unique, which the step's pool relies on).
 */
import type { Prompt } from '../../tree/types.ts';
import { createRng, shuffled } from '../../util/rng.ts';
import { exampleToPrompt } from './datasets.ts';
import type { LoadedSource } from './sources.ts';

export interface QaSplit {
  /** The training mixture (every dataset that is not evaluation-only). */
  train: Prompt[];
  /** Held-out questions, dataset by dataset, each in its shuffled order. */
  test: Prompt[];
  /** Held-out questions per dataset name, in the order of the sources. */
  heldOut: Map<string, Prompt[]>;
}

export function splitSources(sources: readonly LoadedSource[], options: { seed: number; testFraction: number }): QaSplit {
  const train: Prompt[] = [];
  const test: Prompt[] = [];
  const heldOut = new Map<string, Prompt[]>();
  const ids = new Set<string>();
  for (const src of sources) {
    const prompts = src.examples.map(exampleToPrompt);
    for (const p of prompts) {
      if (p.id.includes('/')) throw new RangeError(`dataset ${src.name}: question id "${p.id}" contains "/", which tree node ids reserve; rename it`);
      if (ids.has(p.id)) throw new RangeError(`dataset ${src.name}: question id "${p.id}" is used twice (ids must be unique across all datasets)`);
      ids.add(p.id);
    }
    const order = shuffled(prompts, createRng(options.seed).fork(`qa-split/${src.name}`));
    const nTest = src.spec.evalOnly ? order.length : Math.min(order.length, Math.max(1, Math.round(order.length * options.testFraction)));
    const held = order.slice(0, nTest);
    heldOut.set(src.name, held);
    test.push(...held);
    train.push(...mixture(order.slice(nTest), src.spec.weight));
  }
  return { train, test, heldOut };
}

/** round(weight · n) prompts: whole passes (copies renamed `<id>~<pass>`), then a prefix of one more. */
function mixture(prompts: readonly Prompt[], weight: number): Prompt[] {
  const want = Math.round(weight * prompts.length);
  const out: Prompt[] = [];
  for (let i = 0; i < want; i++) {
    const p = prompts[i % prompts.length]!;
    const pass = Math.floor(i / prompts.length);
    out.push(pass === 0 ? p : { ...p, id: `${p.id}~${pass}` });
  }
  return out;
}
