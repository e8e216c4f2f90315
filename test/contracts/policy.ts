/**
 * The contract every Policy passes (src/policy/types.ts); trainable ones (update + save + load) pass
 * the round-trip part too. Call it from a test file, once per implementation:
 *
 *   import { policyContract } from '../contracts/policy.ts';
 *   policyContract('my-policy', {
 *     make: () => new MyPolicy({ seed: 1 }),        // a fresh instance with the same weights every call
 *     env, prompts: env.test.slice(0, 4),           // where it acts (real prompts)
 *     failure: async () => ({ policy, prompt }),    // optional: a call of this implementation that fails
 *     update: { learningRate: 0.1, clip: 0.2, epochs: 1 },   // trainable policies: the update to test
 *     dispose: (p) => p.dispose(),                  // optional: frees what make built
 *   });
 *
 * What it checks, on the contexts of one seeded episode per prompt (every prefix is a context):
 *  - well-formed turns: text, generatedTokens within the call's maxTokens, token spans of equal
 *    lengths with mask 1 and finite log-probabilities ≤ 0, logprob ≤ 0, entropy ≥ 0;
 *  - determinism under a seed, with no hidden state between calls: a fresh instance asked for the
 *    same contexts in another order, with the same random streams, answers the same;
 *  - failure as data: the failing call rejects with a PolicyCallError whose code is a TurnError code,
 *    and through the rollout engine the step still completes with that code stored on the node;
 *  - save/load round trip (trainable): after `update`, `load(save())` taken before it restores the
 *    exact outputs on the same instance and on a fresh one; an update changes the reported
 *    log-probabilities; a snapshot that is not one throws a named error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Environment } from '../../src/env/types.ts';
import { PolicyCallError } from '../../src/policy/errors.ts';
import type { Policy, PolicyContext, PolicyFailureCode, PolicyOutput, PolicySample, PolicyUpdateOptions, TrainablePolicy } from '../../src/policy/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves, type Prompt, type Turn } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { playEpisode } from './episode.ts';
import { withInstances } from './instances.ts';

/** Every code a policy call may fail with (PolicyFailureCode): a prompt past the context is context_overflow. */
const FAILURE_CODES: readonly PolicyFailureCode[] = ['timeout', 'server_error', 'parse_error', 'context_overflow'];

export interface PolicyContractOptions {
  /** A fresh instance with the same weights every call. */
  make: () => Policy | Promise<Policy>;
  /** The environment the policy acts in, and a few real prompts of it. */
  env: Environment<unknown>;
  prompts: readonly Prompt[];
  /** A call that fails for this implementation (a server answering 500, a context too long). */
  failure?: () => Promise<{ policy: Policy; prompt: Prompt }>;
  /** Trainable policies: the update the round trip applies. Default lr 0.1, clip 0.2, one epoch. */
  update?: PolicyUpdateOptions;
  /** Tokens allowed per call. Default 32. */
  maxTokens?: number;
  /** Frees an instance `make` or `failure` built. */
  dispose?: (policy: Policy) => Promise<void> | void;
}

export function isTrainable(p: Policy): p is TrainablePolicy {
  const t = p as Partial<TrainablePolicy>;
  return typeof t.update === 'function' && typeof t.save === 'function' && typeof t.load === 'function';
}

interface Context {
  prompt: Prompt;
  turns: Turn[];
  label: string;
}

/** The comparable part of an output (log-probabilities are compared with a tolerance). */
const shape = (o: PolicyOutput) => ({ text: o.text, action: o.action, ids: o.tokens?.ids, generated: o.generatedTokens });

export function policyContract(name: string, options: PolicyContractOptions): void {
  const maxTokens = options.maxTokens ?? 32;
  const act = (policy: Policy, c: Context): Promise<PolicyOutput> => {
    const ctx: PolicyContext = { prompt: c.prompt, rendered: options.env.render(c.prompt), turns: c.turns, rng: createRng(11).fork(c.label), maxTokens };
    return policy.act(ctx);
  };
  /** Every prefix of one seeded episode per prompt, played by `policy`. */
  const contexts = async (policy: Policy): Promise<Context[]> => {
    const out: Context[] = [];
    for (const prompt of options.prompts) {
      const ep = await playEpisode(options.env, policy, prompt, createRng(5).fork(prompt.id), { maxTokens });
      for (let t = 0; t < ep.turns.length; t++) out.push({ prompt, turns: ep.turns.slice(0, t), label: `${prompt.id}/${t}` });
    }
    return out;
  };
  const withPolicy = (fn: (p: Policy) => Promise<void>) => withInstances(1, options.make, options.dispose, ([p]) => fn(p!));

  describe(`policy contract: ${name}`, () => {
    test('turns are well formed: text, token counts within maxTokens, token spans and log-probabilities', () =>
      withPolicy(async (policy) => {
        assert.ok(options.prompts.length > 0, 'the contract needs prompts');
        for (const c of await contexts(policy)) {
          const o = await act(policy, c);
          const where = `${name} at ${c.label}`;
          assert.equal(typeof o.text, 'string', where);
          assert.ok(
            Number.isInteger(o.generatedTokens) && o.generatedTokens >= 0 && o.generatedTokens <= Math.max(maxTokens, o.text.length),
            `${where}: generatedTokens ${o.generatedTokens}`,
          );
          if (o.tokens) {
            assert.equal(o.tokens.logprobs.length, o.tokens.ids.length, where);
            assert.equal(o.tokens.mask.length, o.tokens.ids.length, where);
            assert.ok(o.tokens.ids.length <= maxTokens, `${where}: ${o.tokens.ids.length} tokens > ${maxTokens}`);
            assert.ok(
              o.tokens.mask.every((m) => m === 1),
              `${where}: a policy's own tokens have mask 1`,
            );
            assert.ok(
              o.tokens.logprobs.every((l) => Number.isFinite(l) && l <= 1e-6),
              `${where}: token log-probabilities`,
            );
          }
          if (o.logprob !== undefined) assert.ok(Number.isFinite(o.logprob) && o.logprob <= 1e-6, `${where}: logprob ${o.logprob}`);
          if (o.entropy !== undefined) assert.ok(Number.isFinite(o.entropy) && o.entropy >= -1e-9, `${where}: entropy ${o.entropy}`);
        }
      }));

    test('determinism under a seed: a fresh instance, asked in another order, answers the same', () =>
      withInstances(2, options.make, options.dispose, async ([a, b]) => {
        const cs = await contexts(a!);
        const first: PolicyOutput[] = [];
        for (const c of cs) first.push(await act(a!, c));
        const second: PolicyOutput[] = [];
        for (const c of [...cs].reverse()) second.unshift(await act(b!, c));
        cs.forEach((c, i) => {
          assert.deepEqual(shape(second[i]!), shape(first[i]!), `${name} at ${c.label}`);
          if (first[i]!.logprob !== undefined) assert.ok(Math.abs(second[i]!.logprob! - first[i]!.logprob!) < 1e-4, `${name} at ${c.label}: logprob`);
        });
      }));

    test(
      'failure as data: a failing call is a PolicyCallError, stored on the node by the engine',
      { skip: options.failure ? false : 'this implementation has no failing call (pure, in-process)' },
      async () => {
        const { policy, prompt } = await options.failure!();
        try {
          await assert.rejects(
            act(policy, { prompt, turns: [], label: 'fail' }),
            (e: unknown) => e instanceof PolicyCallError && FAILURE_CODES.includes(e.code),
          );
          const result = await runStep({
            prompts: [prompt],
            env: options.env,
            policy,
            rng: createRng(1),
            rootPlan: new Map([[prompt.id, 1]]),
            settings: { maxTokensPerTurn: maxTokens, retry: { maxAttempts: 1 } },
          });
          const ends = leaves(result.trees[0]!);
          assert.equal(ends.length, 1);
          assert.equal(ends[0]!.end, 'error');
          assert.ok((FAILURE_CODES as readonly string[]).includes(ends[0]!.turn!.error!.code), `stored code ${ends[0]!.turn?.error?.code}`);
        } finally {
          await options.dispose?.(policy);
        }
      },
    );

    test('save/load round trip: a snapshot restores the exact outputs after an update, here and in a fresh instance', (t) =>
      withInstances(2, options.make, options.dispose, async ([a, b]) => {
        if (!isTrainable(a!) || !isTrainable(b!)) return void t.skip('not trainable (no update/save/load)');
        const cs = await contexts(a);
        const outputs = async (p: Policy) => {
          const out: PolicyOutput[] = [];
          for (const c of cs) out.push(await act(p, c));
          return out;
        };
        const before = await outputs(a);
        const snapshot = a.save();
        const samples: PolicySample[] = [];
        for (const prompt of options.prompts) {
          const ep = await playEpisode(options.env, a, prompt, createRng(6).fork(prompt.id), { maxTokens });
          const sign = ep.last.reward === 1 ? 1 : -1;
          samples.push({ prompt, turns: ep.turns, advantages: ep.turns.map(() => sign) });
        }
        const metrics = await a.update(samples, options.update ?? { learningRate: 0.1, clip: 0.2, epochs: 1 });
        for (const [k, v] of Object.entries(metrics)) assert.ok(Number.isFinite(v), `update metric ${k} = ${v}`);
        const updated = await outputs(a);
        if (before.some((o) => o.logprob !== undefined))
          assert.ok(
            updated.some((o, i) => Math.abs(o.logprob! - before[i]!.logprob!) > 1e-6),
            'the update changed no log-probability',
          );
        a.load(snapshot);
        const restored = await outputs(a);
        b.load(snapshot);
        const fresh = await outputs(b);
        cs.forEach((c, i) => {
          for (const [which, got] of [
            ['same instance', restored[i]!],
            ['fresh instance', fresh[i]!],
          ] as const) {
            assert.deepEqual(shape(got), shape(before[i]!), `${name} ${which} at ${c.label}`);
            if (before[i]!.logprob !== undefined)
              assert.ok(Math.abs(got.logprob! - before[i]!.logprob!) < 1e-4, `${name} ${which} at ${c.label}: logprob ${got.logprob} vs ${before[i]!.logprob}`);
          }
        });
        assert.throws(
          () => a.load(new TextEncoder().encode('not a snapshot\n')),
          (e: unknown) => e instanceof Error && e.name !== 'Error' && e.message.length > 0,
        );
      }));
  });
}
