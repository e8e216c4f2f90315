/**
 * Supervised warm start: demonstrations are episodes of the scripted world policy (the gold search
 * path with noise: look-alike detours, misread answers — policy/scripted-policy.ts) played in the
 * real environment, so observations are exactly what rollouts will see. The model is trained on the
 * demonstrations' turn tokens (observations masked) for a fixed number of passes — few enough that
 * it solves only a minority of held-out questions and RL has room to improve it.
 */
import { ScriptedWorldPolicy } from '../policy/scripted-policy.ts';
import type { WorldEnv } from '../env/world/world-env.ts';
import type { Prompt, Turn } from '../tree/types.ts';
import { createRng, type Rng } from '../util/rng.ts';
import { initWeights, type LlamaConfig, type LlamaModel } from './model.ts';
import { trajectorySequence } from './sequence.ts';
import { Tokenizer } from './tokenizer.ts';
import { LmTrainer } from './trainer.ts';
import { worldVocabulary } from './world-text.ts';

export interface Demonstration {
  prompt: Prompt;
  turns: Turn[];
  reward: number;
}

/** One scripted episode per prompt (noise: the scripted policy's base noise). */
export async function demonstrations(env: WorldEnv, prompts: readonly Prompt[], options: { noise: number; rng: Rng }): Promise<Demonstration[]> {
  const policy = new ScriptedWorldPolicy(env, { noise: options.noise });
  const out: Demonstration[] = [];
  for (const prompt of prompts) {
    let state = env.reset(prompt);
    const turns: Turn[] = [];
    const rng = options.rng.fork(prompt.id);
    for (;;) {
      const o = await policy.act({ prompt, rendered: '', turns, rng: rng.fork(turns.length), maxTokens: 64 });
      const r = await env.step(state, o.action!);
      turns.push({ thought: o.thought ?? '', action: o.action!, observation: r.observation, text: o.text });
      state = r.state;
      if (r.done) {
        out.push({ prompt, turns, reward: r.reward ?? 0 });
        break;
      }
    }
  }
  return out;
}

export interface WarmStartOptions {
  env: WorldEnv;
  /** Model shape except the vocabulary size (taken from the learned vocabulary). */
  shape: Omit<LlamaConfig, 'vocab'>;
  /** Merged vocabulary pieces. */
  merges: number;
  /** Training questions used for demonstrations. */
  questions: number;
  noise: number;
  /** Passes over the demonstrations. */
  epochs: number;
  learningRate: number;
  batch: number;
  seed: number;
  onBatch?: (info: { epoch: number; batch: number; batches: number; loss: number; tokens: number }) => void;
}

export async function warmStart(o: WarmStartOptions): Promise<{ model: LlamaModel; demos: Demonstration[] }> {
  const vocab = worldVocabulary(o.env, { merges: o.merges });
  const config: LlamaConfig = { ...o.shape, vocab: vocab.pieces.length };
  const rng = createRng(o.seed);
  const model: LlamaModel = { config, vocab, weights: initWeights(config, rng.fork('init')) };
  const tokenizer = new Tokenizer(vocab);
  const demos = await demonstrations(o.env, o.env.train.slice(0, o.questions), { noise: o.noise, rng: rng.fork('demos') });
  const seqs = demos.map((d) => trajectorySequence(tokenizer, d.prompt, d.turns)).filter((s) => s.ids.length <= config.context);
  const trainer = new LmTrainer(model, { batch: o.batch });
  const order = seqs.map((_, i) => i);
  for (let e = 0; e < o.epochs; e++) {
    const r = rng.fork(`epoch/${e}`);
    for (let i = order.length - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    // Group similar lengths inside windows of 8 batches: less padding, still shuffled.
    const window = o.batch * 8;
    const batches: number[][] = [];
    for (let w = 0; w < order.length; w += window) {
      const chunk = order.slice(w, w + window).sort((a, b) => seqs[a]!.ids.length - seqs[b]!.ids.length);
      for (let b = 0; b < chunk.length; b += o.batch) batches.push(chunk.slice(b, b + o.batch));
    }
    batches.forEach((idx, b) => {
      const s = trainer.step('sft', idx.map((i) => ({ seq: seqs[i]! })), o.learningRate);
      o.onBatch?.({ epoch: e, batch: b, batches: batches.length, loss: s.loss, tokens: s.tokens });
    });
  }
  return { model: { config, vocab, weights: trainer.weights() }, demos };
}
