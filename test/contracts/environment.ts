/**
 * The contract every Environment passes (src/env/types.ts). Call it from a test file, once per
 * implementation:
 *
 *   import { environmentContract } from '../contracts/environment.ts';
 *   environmentContract('my-env', {
 *     make: () => new MyEnv({ seed: 3 }),   // a fresh instance; called several times, same seed each time
 *     prompts: myPrompts.slice(0, 6),       // a few real prompts
 *     policy: new RandomSearchR1Policy(),   // anything that produces actions for this environment
 *     toolCalls: () => calls,               // optional: counts tool calls, so restore can be shown to make none
 *   });
 *
 * What it checks, on `episodes` seeded episodes per prompt (default 3):
 *  - restore equals replay: `restore(prompt, turns[0..t])` deep-equals the state reached by stepping,
 *    at every prefix including the end, without calling a tool, and stepping the restored state with
 *    the recorded action gives the recorded observation (a continuation sees what the original saw);
 *  - states are values: `step` leaves its input state unchanged;
 *  - determinism under a seed: two fresh instances give identical renders and episodes;
 *  - failure as data: an unusable action (`{type: 'invalid'}`, an unknown tool, an empty input, and the
 *    parser's verdict on garbage text) comes back as an observation with `invalid: true` and a reason,
 *    counts as a turn, and does not throw; a run of them ends at the turn limit with reward 0, and a
 *    step after the end is misuse (a named error such as EnvError);
 *  - every episode ends within `maxTurns` with a reward in {0, 1}.
 *
 * With `states: 'sessions'` (an environment whose state lives in a server, env/remote) the states are
 * handles on server sessions, restored by replay, so the checks are what replay promises instead:
 *  - restore replays every intermediate prefix: stepping the restored state with the recorded action
 *    gives the recorded observation, reward and end, and the restore reports its cost (t steps);
 *  - a record that differs from what the server answers (an observation, a reward) makes restore throw
 *    ReplayMismatch naming the turn and the field;
 *  - determinism, the turn limit and failure as data as above (invalidity is the server's to say: an
 *    unusable action must come back as an observation that counts as a turn, not as a throw);
 *  - every state is released: `openSessions()` is 0 after each check.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayMismatch } from '../../src/env/errors.ts';
import type { Environment } from '../../src/env/types.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { Action, Prompt } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';
import { playEpisode, type Episode } from './episode.ts';
import { withInstances } from './instances.ts';

export interface EnvironmentContractOptions<S> {
  /** A fresh instance, built the same way (same seed) every call. */
  make: () => Environment<S> | Promise<Environment<S>>;
  /** Prompts to play (a handful of real ones is enough). */
  prompts: readonly Prompt[];
  /** Produces the actions of the episodes (it may write text; the environment's parser reads it). */
  policy: Policy;
  /** Seeded episodes per prompt. Default 3. */
  episodes?: number;
  /** Tool calls made so far, when the implementation can count them (restore must make none). */
  toolCalls?: () => number;
  /** Frees what `make` built (servers, files). */
  dispose?: (env: Environment<S>) => Promise<void> | void;
  /** 'values' (default): states are values, restored without a tool call. 'sessions': handles on server sessions, restored by replay. */
  states?: 'values' | 'sessions';
  /** Sessions: how many the environment holds open now (0 once every state is released). */
  openSessions?: (env: Environment<S>) => number;
}

/** Actions no environment can execute: each must come back as an invalid observation. */
const UNUSABLE: Action[] = [
  { type: 'invalid', input: 'no_action: the turn has no action tag' },
  { type: 'no-such-tool', input: 'x' },
  { type: 'answer', input: '   ' },
];

export function environmentContract<S>(name: string, options: EnvironmentContractOptions<S>): void {
  const n = options.episodes ?? 3;
  const play = async (env: Environment<S>, seed: number): Promise<Array<Episode<S>>> => {
    const out: Array<Episode<S>> = [];
    for (const prompt of options.prompts)
      for (let e = 0; e < n; e++) out.push(await playEpisode(env, options.policy, prompt, createRng(seed).fork(`${prompt.id}/${e}`)));
    return out;
  };
  const withEnv = (fn: (env: Environment<S>) => Promise<void>) => withInstances(1, options.make, options.dispose, ([env]) => fn(env!));

  if (options.states === 'sessions') {
    sessionContract(name, options, play, withEnv);
    return;
  }
  describe(`environment contract: ${name}`, () => {
    test('restore equals replay at every prefix, makes no tool call, and a continuation sees the same observations', () =>
      withEnv(async (env) => {
        assert.ok(options.prompts.length > 0, 'the contract needs prompts');
        const episodes = await play(env, 1);
        for (const [i, prompt] of options.prompts.entries()) {
          for (const ep of episodes.slice(i * n, (i + 1) * n)) {
            const before = options.toolCalls?.();
            for (let t = 0; t <= ep.turns.length; t++)
              assert.deepEqual(await env.restore(prompt, ep.turns.slice(0, t)), ep.states[t], `${prompt.id}: restore after ${t} of ${ep.turns.length} turns`);
            if (before !== undefined) assert.equal(options.toolCalls!(), before, `${prompt.id}: restore called a tool`);
          }
        }
        for (const [i, prompt] of options.prompts.entries()) {
          const ep = episodes[i * n]!;
          for (let t = 0; t < ep.turns.length; t++) {
            const again = await env.step(await env.restore(prompt, ep.turns.slice(0, t)), ep.turns[t]!.action);
            assert.equal(again.observation, ep.turns[t]!.observation, `${prompt.id}: observation of turn ${t} after restore`);
            assert.deepEqual(again.state, ep.states[t + 1]);
          }
        }
      }));

    test('states are values: step leaves its input unchanged', () =>
      withEnv(async (env) => {
        for (const prompt of options.prompts) {
          const ep = await playEpisode(env, options.policy, prompt, createRng(2).fork(prompt.id));
          for (let t = 0; t < ep.turns.length; t++) {
            const state = await env.restore(prompt, ep.turns.slice(0, t));
            const copy = structuredClone(state);
            await env.step(state, ep.turns[t]!.action);
            assert.deepEqual(state, copy, `${prompt.id}: step ${t} mutated its input state`);
          }
        }
      }));

    test('determinism under a seed: two fresh instances give the same renders and episodes', () =>
      withInstances(2, options.make, options.dispose, async ([a, b]) => {
        assert.deepEqual(
          options.prompts.map((p) => b!.render(p)),
          options.prompts.map((p) => a!.render(p)),
        );
        const [ea, eb] = [await play(a!, 3), await play(b!, 3)];
        assert.deepEqual(
          eb.map((e) => [e.turns, e.last]),
          ea.map((e) => [e.turns, e.last]),
        );
      }));

    test('every episode ends within the turn limit with a reward in {0, 1}', () =>
      withEnv(async (env) => {
        for (const ep of await play(env, 4)) {
          assert.equal(ep.last.done, true);
          if (env.maxTurns !== undefined) assert.ok(ep.turns.length <= env.maxTurns, `${ep.turns.length} turns > ${env.maxTurns}`);
          assert.ok(ep.last.reward === 0 || ep.last.reward === 1, `reward ${ep.last.reward}`);
        }
      }));

    test('failure as data: unusable actions are invalid observations that count as turns; the turn limit ends with reward 0; stepping past the end is misuse', () =>
      withEnv(async (env) => {
        const prompt = options.prompts[0]!;
        const unusable = env.parse ? [...UNUSABLE, env.parse('%% not a turn %%').action] : UNUSABLE;
        for (const action of unusable) {
          const o = await env.step(await env.reset(prompt), action);
          assert.equal(o.invalid, true, `${JSON.stringify(action)} is not invalid`);
          assert.ok(typeof o.reason === 'string' && o.reason.length > 0, 'an invalid step names its rule');
          assert.ok(o.observation.length > 0, 'an invalid step answers with an observation');
          if (env.maxTurns !== undefined && env.maxTurns > 1) assert.equal(o.done, false);
          assert.deepEqual(
            await env.restore(prompt, [{ thought: '', action, observation: o.observation }]),
            o.state,
            'an invalid turn restores like any other',
          );
        }
        if (env.maxTurns === undefined) return;
        let state: S = await env.reset(prompt);
        for (let t = 1; t <= env.maxTurns; t++) {
          const o = await env.step(state, UNUSABLE[0]!);
          state = o.state;
          if (t < env.maxTurns) assert.equal(o.done, false, `turn ${t} of ${env.maxTurns}`);
          else assert.deepEqual([o.done, o.reward, o.reason], [true, 0, 'turn_limit']);
        }
        await assert.rejects(
          env.step(state, UNUSABLE[0]!),
          (e: unknown) => e instanceof Error && e.name !== 'Error',
          'a step after the end is misuse: a named error',
        );
      }));
  });
}

/** The contract for environments whose states are server sessions (see the header). */
function sessionContract<S>(
  name: string,
  options: EnvironmentContractOptions<S>,
  play: (env: Environment<S>, seed: number) => Promise<Array<Episode<S>>>,
  withEnv: (fn: (env: Environment<S>) => Promise<void>) => Promise<void>,
): void {
  const n = options.episodes ?? 3;
  const allReleased = (env: Environment<S>, what: string) => {
    if (options.openSessions) assert.equal(options.openSessions(env), 0, `${what}: every state is released`);
  };
  describe(`environment contract (server sessions): ${name}`, () => {
    test('restore replays every prefix: the restored state steps to the recorded observation, reward and end, and reports its cost', () =>
      withEnv(async (env) => {
        assert.ok(options.prompts.length > 0, 'the contract needs prompts');
        const episodes = await play(env, 1);
        let replayed = 0;
        for (const [i, prompt] of options.prompts.entries()) {
          for (const ep of episodes.slice(i * n, (i + 1) * n)) {
            for (let t = 0; t < ep.turns.length; t++) {
              const state = await env.restore(prompt, ep.turns.slice(0, t));
              assert.equal(env.restoreCost?.(state)?.steps, t, `${prompt.id}: restoring ${t} turns replays ${t} steps (restoreCost)`);
              const again = await env.step(state, ep.turns[t]!.action);
              assert.equal(again.observation, ep.turns[t]!.observation, `${prompt.id}: observation of turn ${t} after restoring ${t} turns`);
              assert.deepEqual(again.env?.reward, ep.turns[t]!.env?.reward, `${prompt.id}: raw reward of turn ${t} after restore`);
              assert.equal(again.done, t === ep.turns.length - 1, `${prompt.id}: end after turn ${t}`);
              if (again.done) assert.deepEqual([again.reward, again.score], [ep.last.reward, ep.last.score], `${prompt.id}: the end's reward after restore`);
              await env.release?.(again.state);
              replayed += t;
            }
          }
        }
        assert.ok(replayed > 0, 'some episode had an intermediate prefix to replay');
        allReleased(env, 'after the replays');
      }));

    test('a record the server does not reproduce is a ReplayMismatch naming the turn and the field', () =>
      withEnv(async (env) => {
        const prompt = options.prompts[0]!;
        const ep = (await play(env, 5)).find((e) => e.turns.length >= 2) ?? (await play(env, 6)).find((e) => e.turns.length >= 2);
        assert.ok(ep, 'an episode with two turns or more');
        const forged = ep.turns.map((t, i) => (i === 0 ? { ...t, observation: `${t.observation} (not what the server said)` } : t));
        await assert.rejects(
          async () => env.restore(prompt, forged.slice(0, 1)),
          (e: unknown) => e instanceof ReplayMismatch && e.turn === 0 && e.field === 'observation',
        );
        if (ep.turns[0]!.env?.reward !== undefined) {
          const wrongReward = [{ ...ep.turns[0]!, env: { ...ep.turns[0]!.env, reward: ep.turns[0]!.env.reward + 0.5 } }];
          await assert.rejects(
            async () => env.restore(prompt, wrongReward),
            (e: unknown) => e instanceof ReplayMismatch && e.field === 'reward',
          );
        }
        allReleased(env, 'after the mismatches');
      }));

    test('determinism under a seed: two fresh instances give the same renders and episodes', () =>
      withInstances(2, options.make, options.dispose, async ([a, b]) => {
        assert.deepEqual(
          options.prompts.map((p) => b!.render(p)),
          options.prompts.map((p) => a!.render(p)),
        );
        const [ea, eb] = [await play(a!, 3), await play(b!, 3)];
        assert.deepEqual(
          eb.map((e) => [e.turns, e.last]),
          ea.map((e) => [e.turns, e.last]),
        );
      }));

    test('every episode ends within the turn limit with a reward in {0, 1}', () =>
      withEnv(async (env) => {
        for (const ep of await play(env, 4)) {
          assert.equal(ep.last.done, true);
          if (env.maxTurns !== undefined) assert.ok(ep.turns.length <= env.maxTurns, `${ep.turns.length} turns > ${env.maxTurns}`);
          assert.ok(ep.last.reward === 0 || ep.last.reward === 1, `reward ${ep.last.reward}`);
        }
        allReleased(env, 'after the episodes');
      }));

    test('failure as data: an unusable action is an observation that counts as a turn; the turn limit ends with reward 0; stepping past the end is misuse', () =>
      withEnv(async (env) => {
        const prompt = options.prompts[0]!;
        const unusable = env.parse ? env.parse('%% not a turn %%').action : UNUSABLE[0]!;
        let state: S = await env.reset(prompt);
        const limit = env.maxTurns ?? 1;
        for (let t = 1; t <= limit; t++) {
          const o = await env.step(state, unusable);
          assert.equal(typeof o.observation, 'string');
          state = o.state;
          if (t < limit) assert.equal(o.done, false, `turn ${t} of ${limit}`);
          else assert.deepEqual([o.done, o.reward], [true, 0]);
        }
        await assert.rejects(
          env.step(state, unusable),
          (e: unknown) => e instanceof Error && e.name !== 'Error',
          'a step after the end is misuse: a named error',
        );
        await env.release?.(state);
        allReleased(env, 'after the unusable actions');
      }));
  });
}
