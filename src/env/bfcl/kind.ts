/** The bfcl kind (env.kind bfcl): BFCL v4 multi-turn function calling, per-category held-out rows. */
import { groupBy, seed, testFraction } from '../kind-fields.ts';
import { envKind, kindObject } from '../kind.ts';
import type { Environment } from '../types.ts';

export const bfclKind = envKind('bfcl', kindObject('bfcl', { seed, testFraction }), {
  async build(s, { maxTurns }) {
    const { BfclEnv } = await import('./env.ts');
    // No trainable policy here can call BFCL's functions (no such model on CPU): the scripted noisy policy drives it.
    const env = new BfclEnv({ seed: s.seed, testFraction: s.testFraction, maxTurns });
    const heldOut = groupBy(env.test, (p) => `bfcl_${(p.meta?.bfcl as { category: string }).category}`);
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut };
  },
});
