/**
 * Every policy passes the shared contract (test/contracts/policy.ts): the embedded policy, the two
 * model-free policies, the simulator's learnable tabular policy, the tiny LM (a small random-weight llama GGUF written by the project, loaded by
 * llama.cpp), and the OpenAI client against two real HTTP servers: the scripted stand-in and
 * `trace-rl serve`'s app in front of the same tiny GGUF.
 */
import { after } from 'node:test';
import { Simulator, WorldEnv } from '../../src/env/index.ts';
import {
  EmbeddedPolicy,
  OpenAIPolicy,
  ScriptedWorldPolicy,
  SimulatorPolicy,
  SimulatorTabularPolicy,
  worldCandidateSource,
  type Policy,
} from '../../src/policy/index.ts';
import { LlamaEngine, TinyLmPolicy } from '../../src/tinylm/index.ts';
import { serveOpenAI } from '../../src/tinylm/openai-server.ts';
import { loadTranscript } from '../../src/tokens/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { TinkerPolicy } from '../../src/policy/tinker/index.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { policyContract } from '../contracts/policy.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';
import { startStandIn, type StandIn } from './openai-stand-in.ts';

const world = new WorldEnv({ seed: 1, questions: 200 });
const hop1 = world.test.filter((p) => (p.meta as { world: { hops: number } }).world.hops === 1).slice(0, 3);

policyContract('embedded', {
  make: () => new EmbeddedPolicy({ candidates: worldCandidateSource(world) }),
  env: world,
  prompts: world.test.slice(0, 4),
  update: { learningRate: 0.5, clip: 0.2, epochs: 1 },
});

policyContract('scripted world', { make: () => new ScriptedWorldPolicy(world, { noise: 0.35 }), env: world, prompts: world.test.slice(0, 4) });

const simulator = new Simulator({ seed: 3 });
policyContract('simulator', { make: () => new SimulatorPolicy(simulator), env: simulator, prompts: simulator.prompts(4) });
policyContract('simulator-tabular', {
  make: () => new SimulatorTabularPolicy(simulator),
  env: simulator,
  prompts: simulator.prompts(4),
  update: { learningRate: 50, clip: 0.2, epochs: 1 },
});

// The tiny LM: a random-weight llama over the world's vocabulary (its turns are mostly invalid, which
// is fine here: the contract is about the mechanics, not the skill).
const tiny = fixture({ context: 2048 });
const disposeTiny = (p: Policy) => (p as TinyLmPolicy).dispose();
policyContract('tiny-lm', {
  make: async () => {
    await initJax();
    return new TinyLmPolicy(tiny.model, { maxTokensPerTurn: 16, sequences: 1, trainer: { batch: 4 } });
  },
  env: tiny.env,
  prompts: tiny.env.test.slice(0, 2),
  update: { learningRate: 0.01, clip: 0.2, epochs: 1 },
  maxTokens: 16,
  dispose: disposeTiny,
  // A question longer than the model's context: the call fails (server_error), it does not crash.
  failure: async () => {
    await initJax();
    const policy = new TinyLmPolicy(tiny.model, { maxTokensPerTurn: 16, sequences: 1 });
    const p = tiny.env.test[0]!;
    return { policy, prompt: { ...p, id: 'too-long', question: `${p.question} ${'and again '.repeat(2000)}` } };
  },
});

// OpenAI client against real servers, started on first use and closed after the file.
const servers: Array<{ close(): Promise<void> }> = [];
const disposeLater: LlamaEngine[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await engine?.dispose();
  for (const e of disposeLater) await e.dispose();
});
let standIn: StandIn | undefined;
const standInUrl = async () => {
  if (!standIn) servers.push((standIn = await startStandIn()));
  return standIn.url;
};
policyContract('openai (stand-in server)', {
  make: async () => new OpenAIPolicy({ baseURLs: [await standInUrl()], model: 'stand-in' }),
  env: world,
  prompts: hop1,
  failure: async () => {
    const failing = await startStandIn({ fault: () => 'error500' });
    servers.push(failing);
    return { policy: new OpenAIPolicy({ baseURLs: [failing.url], model: 'stand-in' }), prompt: hop1[0]! };
  },
});

let engine: LlamaEngine | undefined;
let served: string | undefined;
const servedUrl = async () => {
  if (!served) {
    engine = await LlamaEngine.load(writeTemp(tiny.model, 'served.gguf'), { sequences: 1 });
    const server = await serveOpenAI(engine, { modelName: 'tiny', port: 0 });
    servers.push(server);
    served = `${server.url}/v1`;
  }
  return served;
};
policyContract('openai (trace-rl serve, tiny GGUF)', {
  make: async () => new OpenAIPolicy({ baseURLs: [await servedUrl()], model: 'tiny', extras: 'vllm' }),
  env: tiny.env,
  prompts: tiny.env.test.slice(0, 2),
  maxTokens: 16,
  // The server answers a prompt longer than its context with HTTP 400: a non-retryable server_error.
  failure: async () => {
    const p = tiny.env.test[0]!;
    return {
      policy: new OpenAIPolicy({ baseURLs: [await servedUrl()], model: 'tiny' }),
      prompt: { ...p, id: 'too-long', question: `${p.question} ${'and again '.repeat(2000)}` },
    };
  },
});

// Token-in/token-out on the same server: id prompts built with its own /tokenize.
policyContract('openai tokens mode (trace-rl serve, tiny GGUF)', {
  make: async () =>
    new OpenAIPolicy({
      baseURLs: [await servedUrl()],
      model: 'tiny',
      mode: 'tokens',
      transcript: await loadTranscript('server', { serverURL: await servedUrl() }),
    }),
  env: tiny.env,
  prompts: tiny.env.test.slice(0, 2),
  maxTokens: 16,
  failure: async () => {
    const p = tiny.env.test[0]!;
    const transcript = await loadTranscript('server', { serverURL: await servedUrl() });
    return {
      policy: new OpenAIPolicy({ baseURLs: [await servedUrl()], model: 'tiny', mode: 'tokens', transcript }),
      prompt: { ...p, id: 'too-long', question: `${p.question} ${'and again '.repeat(2000)}` },
    };
  },
});

// The Tinker sampling API on the same tiny model (serve --tinker's routes, in process): prompts as ids.
let tinkerRoot: string | undefined;
const tinkerUrl = async () => {
  if (!tinkerRoot) {
    await initJax();
    const file = writeTemp(tiny.model, 'tinker.gguf');
    const tinkerEngine = await LlamaEngine.load(file, { sequences: 1 });
    const server = await serveOpenAI(tinkerEngine, {
      modelName: 'tiny',
      port: 0,
      tinker: {
        model: tiny.model,
        workDir: mkdtempSync(join(tmpdir(), 'contract-tinker-')),
        apiKey: 'contract-key',
        baseFile: file,
        load: (f) => LlamaEngine.load(f, { sequences: 1 }),
      },
    });
    servers.push(server);
    disposeLater.push(tinkerEngine);
    tinkerRoot = server.url;
  }
  return tinkerRoot;
};
const tinkerPolicy = async (maxTokensPerTurn = 16) =>
  new TinkerPolicy({
    baseURL: await tinkerUrl(),
    baseModel: 'tiny',
    loraRank: 1,
    apiKey: 'contract-key',
    transcript: await loadTranscript('server', { serverURL: await tinkerUrl() }),
    prompt: 'rendered',
    temperature: 1,
    maxTokensPerTurn,
    stop: ['</search>', '</answer>'],
    adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
  });
policyContract('tinker (trace-rl serve --tinker, tiny GGUF)', {
  make: () => tinkerPolicy(),
  env: tiny.env,
  prompts: tiny.env.test.slice(0, 2),
  maxTokens: 16,
  // A prompt longer than the context is refused by the server (HTTP 413): a non-retryable server_error.
  failure: async () => {
    const p = tiny.env.test[0]!;
    return { policy: await tinkerPolicy(), prompt: { ...p, id: 'too-long', question: `${p.question} ${'and again '.repeat(2000)}` } };
  },
});
