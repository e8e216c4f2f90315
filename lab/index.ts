/**
 * The lab's strategies, registered with the strategy family when this module is imported (the bench's
 * workers import it; `trace-rl train --plugin lab/index.ts` does the same). The library never imports
 * the lab: these are experiments' instruments, not defaults.
 */
import { strategies } from '../src/allocate/index.ts';
import { piGoldSchema, piGoldStrategy } from './pi-gold.ts';

if (!strategies.has('pigold'))
  strategies.register({
    name: 'pigold',
    schema: piGoldSchema,
    build: piGoldStrategy as never,
    rootBudget: ((o: { min: number; max: number }) => ({ kind: 'solver', continuations: 0, min: o.min, max: o.max })) as never,
  });

export { piGoldStrategy, goldTrace, goldValue, PREFILL_PRICE } from './pi-gold.ts';
