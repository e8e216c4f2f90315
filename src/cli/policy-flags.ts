/**
 * Policy flags of `trace-rl eval` and `rollout` checked by the policy kind's schema
 * (src/policy/registry.ts), so the allowed values live in one place; a bad value is reported under its
 * flag, e.g. `--base-url notaurl: not an http(s) URL; …`.
 */
import type { Command } from 'commander';
import { policyConfigSchema, type PolicyConfig } from '../policy/registry.ts';
import { UsageError } from './io.ts';
import { settingHelp } from './config-flags.ts';

/** `settings` parsed; `flags` names the flag of each settings field, for the message. */
export function policyFromFlags(settings: Record<string, unknown>, flags: Record<string, string>): PolicyConfig {
  const parsed = policyConfigSchema.safeParse(settings);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? 'kind');
  const flag = flags[field] ?? `policy.${field}`;
  const value = issue.path.reduce<unknown>((o, k) => (o as Record<PropertyKey, unknown> | undefined)?.[k], settings);
  const shown = value === undefined || Array.isArray(value) ? '' : ` ${String(value)}`;
  throw new UsageError(`${flag}${shown}: ${issue.message}`);
}

const collect = (v: string, acc: string[] = []) => [...acc, v];

/** What commander gives for those flags, and for the ones every such command also has. */
export interface PolicyAndEnvFlags {
  policy: string;
  env?: string;
  baseUrl?: string[];
  model?: string;
  apiKeyFile?: string;
  mode: string;
  run?: string;
  datasets?: string;
  retrieval?: string;
  retrieverUrl?: string;
  topK?: string;
  set?: string[];
  concurrency: string;
  retries: string;
  timeoutMs: string;
  maxTokens: string;
  maxTurns?: string;
  split: string;
  temperature: string;
  seed: string;
  json?: boolean;
  quiet?: boolean;
}

/**
 * The flags that choose a policy and an environment, shared by the commands that run one
 * (`trace-rl eval`, `trace-rl diagnose`): one text per flag. `what` says what becomes of a run's last
 * checkpoint ("evaluated", "diagnosed").
 */
export function policyAndEnvOptions(cmd: Command, what: string): Command {
  return (
    cmd
      .requiredOption(
        '--policy <kind>',
        'openai (any OpenAI-compatible server), tiny-lm (a GGUF on llama.cpp), embedded (a trained run, or untrained without --run) or scripted (the environment’s own policy: the simulator’s, bfcl’s, math-world’s)',
      )
      // The environment flags' help comes from the env schema (the registry's kinds and fields), as train's does.
      .option('--env <kind>', `${settingHelp('env.kind')} Default: the run’s, else qa.`)
      .option('--base-url <url>', 'openai: server base URL such as http://localhost:8000/v1 (repeat for several servers)', collect)
      .option('--model <name|file>', 'openai: model name sent to the server; tiny-lm: the GGUF file (with --run: the run’s model by default)')
      .option('--mode <mode>', 'openai: completions (one growing prompt) or chat', 'completions')
      .option('--api-key-file <file>', 'openai: a file whose first line is the server’s API key (else TRACE_RL_API_KEY, else OPENAI_API_KEY; never stored)')
      .option('--run <dir>', `embedded or tiny-lm: a training run folder; its last checkpoint is ${what} and its env settings are the defaults`)
      .option('--datasets <list>', `${settingHelp('env.datasets')} math: one dataset or JSONL file, held out as env.math.testDataset.`)
      .option('--retrieval <mode>', settingHelp('env.retrieval'))
      .option('--retriever-url <url>', settingHelp('env.retrieverUrl'))
      .option('--top-k <k>', settingHelp('env.topK'))
      .option('--set <path=value...>', 'any environment setting, e.g. --set env.successRule=em')
      .option('--concurrency <n>', 'policy requests in flight at most', '8')
      .option('--retries <n>', 'attempts per policy call or tool step (1 = no retry)', '5')
      .option('--timeout-ms <ms>', 'per policy call or tool step', '60000')
      .option('--max-tokens <n>', 'generated tokens per turn at most', '512')
  );
}
