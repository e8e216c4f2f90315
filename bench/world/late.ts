/**
 * The late-decision world profile against the default world (issue 34 §2): held-out greedy success
 * of the behaviour-cloned embedded policy, and the per-depth contrast profile (bench/world/contrast.ts)
 * of that policy on training questions, k continuations from every prefix.
 *
 * Run: nice npx tsx bench/world/late.ts [--profiles default,late] [--env-seed 7] [--test 300] [--prompts 60] [--k 6] [--seed 0]
 */
import os from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { buildComponents, parseTrainConfig } from '../../src/train/index.ts';
import { greedyAccuracy } from '../../src/eval/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { worldMeta } from '../../src/env/index.ts';
import { contrastTrees, lateShare, openProfile, profileOf } from './contrast.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}
const profiles = arg('profiles', 'default,late').split(',');
const envSeed = Number(arg('env-seed', '7'));
const nTest = Number(arg('test', '300'));
const nPrompts = Number(arg('prompts', '60'));
const k = Number(arg('k', '6'));
const seed = Number(arg('seed', '0'));
// A private cache: measure the fit of this code, never a file an earlier version wrote.
process.env.TRACE_RL_CACHE = arg('cache', '') || mkdtempSync(join(os.tmpdir(), 'late-bench-'));

for (const profile of profiles) {
  const t0 = performance.now();
  const config = parseTrainConfig({ seed, env: { seed: envSeed, world: { profile } } });
  const parts = await buildComponents(config);
  const test = parts.test.slice(0, nTest);
  const acc = await greedyAccuracy({ prompts: test, env: parts.env, policy: parts.policy, rng: createRng(seed).fork('late/greedy'), settings: config.engine });
  const prompts = parts.train.slice(0, nPrompts);
  const trees = await contrastTrees({
    env: parts.env,
    policy: parts.policy,
    prompts,
    k,
    rng: createRng(seed).fork('late/contrast'),
    maxTurns: config.engine.maxTurns,
  });
  const profileRows = profileOf(trees);
  const kindOf = new Map(prompts.map((p) => [p.id, worldMeta(p).kind]));
  const s = ((performance.now() - t0) / 1000).toFixed(0);
  console.log(`\n### ${profile} (env seed ${envSeed}, bc ${JSON.stringify(config.policy.kind === 'embedded' ? config.policy.bc : {})}; ${s} s)\n`);
  console.log(`held-out greedy success: ${JSON.stringify(acc)} on ${test.length} questions\n`);
  console.log('| depth | nodes | mean V̂ | mean V(1−V) | share of depth 0 |');
  console.log('|---|---|---|---|---|');
  const root = profileRows.find((r) => r.depth === 0)?.meanVar ?? NaN;
  for (const r of profileRows) console.log(`| ${r.depth} | ${r.nodes} | ${r.meanV.toFixed(3)} | ${r.meanVar.toFixed(4)} | ${(r.meanVar / root).toFixed(2)} |`);
  console.log(`\nmean V(1−V) at depths ≥ 2 / depth 0: ${lateShare(profileRows).toFixed(2)}`);
  const open = openProfile(trees);
  console.log(
    `\nopen variance along rollouts (share of depth 0): ${open.map((r) => `d${r.depth} ${r.open.toFixed(4)} (${(r.open / open[0]!.open).toFixed(2)})`).join(', ')}`,
  );
  // Where the contrast comes from: per question kind (comparisons end in a pick the features cannot decide).
  for (const kind of [...new Set(kindOf.values())].sort()) {
    const rows = profileOf(trees.filter((t) => kindOf.get(t.promptId) === kind));
    console.log(
      `- ${kind} (${rows[0]?.nodes ?? 0} prompts): ${rows.map((r) => `d${r.depth} ${r.meanVar.toFixed(3)}`).join(', ')}; share ≥ 2: ${lateShare(rows).toFixed(2)}; open: ${openProfile(
        trees.filter((t) => kindOf.get(t.promptId) === kind),
      )
        .map((r) => r.open.toFixed(3))
        .join(' ')}`,
    );
  }
}
