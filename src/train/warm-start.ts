import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { WorldEnv } from '../env/world/index.ts';
import { ScriptedWorldPolicy } from '../policy/scripted-policy.ts';
import type { Prompt } from '../tree/types.ts';
import type { Choice, EmbeddedPolicy } from '../policy/embedded/index.ts';
import { runStep } from '../rollout/index.ts';
import { leaves, turnsTo, type Turn } from '../tree/index.ts';
import { createRng } from '../util/rng.ts';

/**
 * Behaviour cloning of the embedded policy on scripted, noisy demonstrations: the starting point of
 * agentic RL is a model that already searches before it answers (an SFT / instruct model), not a
 * uniform random chooser. The world's scripted policy (src/policy/scripted-policy.ts) plays
 * `demosPerPrompt` sampled episodes on every training question; the embedded policy is then fitted by
 * maximum likelihood on the demonstrated actions (full-batch Adam, `epochs` steps; features are
 * extracted once per demonstrated turn). Demonstrations
 * include the scripted policy's mistakes (look-alike searches, misreads, last-turn guesses), and a
 * linear policy over generic features cannot copy it exactly, so the clone searches like the script
 * but solves fewer questions: room to learn in both directions.
 */
export interface WarmStartSettings {
  /** Base noise of the scripted demonstrator. */
  noise: number;
  /** Sampled demonstration episodes per training question. */
  demosPerPrompt: number;
  /** Full-batch Adam steps of the maximum-likelihood fit. */
  epochs: number;
  learningRate: number;
}

/** Everything the cloned weights depend on; its hash names the cache file. */
export interface WarmStartKey {
  seed: number;
  env: Record<string, unknown>;
  settings: WarmStartSettings;
  dim: number;
}

/** Bump when the demonstrator, the features or the fit change, so stale cached weights are never reused. */
const VERSION = 'bc@1';

export function warmStartHash(key: WarmStartKey): string {
  return createHash('sha256')
    .update(JSON.stringify({ VERSION, ...key }))
    .digest('hex')
    .slice(0, 20);
}

/** Where cached warm starts live: $TRACE_RL_CACHE, else ~/.cache/trace-rl. */
export function defaultCacheDir(): string {
  return process.env.TRACE_RL_CACHE ?? join(homedir(), '.cache', 'trace-rl');
}

/** The demonstrations: sampled scripted episodes on every training question (turns of every leaf). */
export async function demonstrations(
  env: WorldEnv,
  prompts: readonly Prompt[],
  settings: WarmStartSettings,
  seed: number,
): Promise<Array<{ prompt: Prompt; turns: Turn[] }>> {
  const scripted = new ScriptedWorldPolicy(env, { noise: settings.noise });
  const result = await runStep({
    prompts,
    env,
    policy: scripted,
    rng: createRng(seed).fork('warm-start/demos'),
    rootPlan: new Map(prompts.map((p) => [p.id, settings.demosPerPrompt])),
    settings: { maxTurns: env.maxTurns },
  });
  const byId = new Map(prompts.map((p) => [p.id, p]));
  return result.trees.flatMap((tree) => leaves(tree).map((leaf) => ({ prompt: byId.get(tree.promptId)!, turns: turnsTo(tree, leaf.id) })));
}

/** Fits the policy to every demonstrated action (maximum likelihood); returns the final mean NLL per turn. */
export function cloneDemonstrations(
  policy: EmbeddedPolicy,
  demos: ReadonlyArray<{ prompt: Prompt; turns: readonly Turn[] }>,
  settings: WarmStartSettings,
): number {
  const choices: Choice[] = [];
  for (const { prompt, turns } of demos) {
    turns.forEach((t, i) => {
      const c = policy.choice(prompt, turns.slice(0, i), t.action);
      if (c) choices.push(c);
    });
  }
  return policy.fitChoices(choices, settings.epochs, settings.learningRate);
}

/**
 * The warm-started policy weights for `key`: read from `<cacheDir>/warm-start-<hash>.bin` when present,
 * else cloned and written there (atomically, so parallel runs of a comparison share one file).
 * Returns the snapshot; `policy` is loaded with it.
 */
export async function warmStart(
  policy: EmbeddedPolicy,
  env: WorldEnv,
  key: WarmStartKey,
  cacheDir = defaultCacheDir(),
): Promise<{ snapshot: Uint8Array; cached: boolean; file: string }> {
  const file = join(cacheDir, `warm-start-${warmStartHash(key)}.bin`);
  if (existsSync(file)) {
    const snapshot = new Uint8Array(readFileSync(file));
    policy.load(snapshot);
    return { snapshot, cached: true, file };
  }
  const samples = await demonstrations(env, env.train, key.settings, key.seed);
  cloneDemonstrations(policy, samples, key.settings);
  // The optimiser state of the fit is not part of the start: RL begins with fresh Adam moments.
  policy.resetOptimiser();
  const snapshot = policy.save();
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, snapshot);
  renameSync(tmp, file);
  return { snapshot, cached: false, file };
}
