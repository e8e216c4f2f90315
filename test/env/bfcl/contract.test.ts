/** The BFCL environment passes the shared Environment contract (test/contracts/environment.ts) on real entries. */
import { join } from 'node:path';
import { BfclEnv } from '../../../src/env/bfcl/env.ts';
import { ScriptedBfclPolicy } from '../../../src/policy/index.ts';
import { environmentContract } from '../../contracts/environment.ts';

const options = { dataDir: join(import.meta.dirname, '../../../data/bfcl'), seed: 11, today: { year: 2026, month: 11, day: 30 }, maxTurns: 60 };
const env = new BfclEnv(options);
// One entry per category, each with several user turns.
const prompts = (['base', 'miss_func', 'miss_param', 'long_context'] as const).map((c) =>
  env.test.find((p) => env.entry(p).category === c && env.entry(p).question.length > 1)!,
);
environmentContract('bfcl', {
  make: () => new BfclEnv(options),
  prompts,
  policy: new ScriptedBfclPolicy(env, { wrongArgument: 0.1, skip: 0.05, repeat: 0.05, stop: 0.05 }),
});
