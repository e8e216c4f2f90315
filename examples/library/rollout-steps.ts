/**
 * The rollout service from code: TRACE steps against an OpenAI-compatible server (vLLM, SGLang,
 * llama.cpp, `trace-rl serve`), one verl batch (Parquet) per step, the trainer's part played here by
 * releasing the weights gate at once. In a project that installed the package, import from
 * 'trace-rl' instead of '../../src/index.ts'.
 *
 *   node --import tsx examples/library/rollout-steps.ts http://localhost:8000/v1 runs/library-example
 *
 * The API key, if the server needs one, comes from TRACE_RL_API_KEY (or OPENAI_API_KEY).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { policy, service, tokens } from '../../src/index.ts';

const [baseURL = 'http://localhost:8000/v1', out = 'runs/library-example'] = process.argv.slice(2);

const server = new policy.OpenAIPolicy({
  baseURLs: [baseURL],
  model: process.env.TRACE_RL_MODEL ?? 'default',
  apiKey: policy.resolveApiKey({ env: process.env })?.key,
});
const gate = new service.WeightsGate({ dir: out, pollMs: 20 });

try {
  const result = await service.runRolloutService({
    out,
    // Two steps of TRACE on the embedded world: 4 candidate prompts, 8 trajectories a step.
    config: { steps: 2, pool: 4, strategy: { name: 'trace', budget: 8 }, env: { questions: 300 }, engine: { concurrency: 4 } },
    policy: server,
    format: 'verl',
    // The server's token ids are kept when it returns them; this tokenizer renders the rest.
    tokenizer: tokens.codepointTokenizer,
    gate,
    clock: () => performance.now(),
    wallClock: () => Date.now(),
    onEvent(e) {
      if (e.kind === 'batch') console.log(`step ${e.step}: ${e.rows} rows (${e.status}) in ${e.file}`);
      // A real trainer trains on the batch and loads new weights into the server before this.
      if (e.kind === 'waiting') writeFileSync(e.file, '');
    },
  });
  console.log(`${result.status}: ${result.batches.length} batches; metrics in ${out}/metrics.jsonl`);
} catch (e) {
  if (!(e instanceof service.RolloutStepFailed)) throw e;
  console.error(e.message);
  process.exitCode = 1;
} finally {
  await gate.close();
}
