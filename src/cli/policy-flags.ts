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
  throw flagRefusal(settings, flags, parsed.error.issues[0]!);
}

/**
 * Refuses `settings` when their first problem lies in a field a flag gave, under that flag
 * (`--base-url notaurl: …`); a problem elsewhere (a `--set policy.*` pair, a setting no flag gave) is
 * left to the configuration's parse, which names it by its path as `trace-rl train` does.
 */
export function refuseFlagValues(settings: Record<string, unknown>, flags: Record<string, string>): void {
  const parsed = policyConfigSchema.safeParse(settings);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  // An unknown key's issue sits on the object itself (path []), which no flag gave.
  if (issue.code !== 'unrecognized_keys' && flags[String(issue.path[0] ?? 'kind')] !== undefined) throw flagRefusal(settings, flags, issue);
}

function flagRefusal(settings: Record<string, unknown>, flags: Record<string, string>, issue: { path: PropertyKey[]; message: string }): UsageError {
  const field = String(issue.path[0] ?? 'kind');
  const flag = flags[field] ?? `policy.${field}`;
  const value = issue.path.reduce<unknown>((o, k) => (o as Record<PropertyKey, unknown> | undefined)?.[k], settings);
  const shown = value === undefined || Array.isArray(value) ? '' : ` ${String(value)}`;
  return new UsageError(`${flag}${shown}: ${issue.message}`);
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
        'openai (any OpenAI-compatible server), tinker (a Tinker-compatible engine’s base model: trace-rl serve --tinker, hosted Tinker), tiny-lm (a GGUF on llama.cpp), embedded (a trained run, or untrained without --run) or scripted (the environment’s own policy: the simulator’s, bfcl’s, math-world’s)',
      )
      // The environment flags' help comes from the env schema (the registry's kinds and fields), as train's does.
      .option('--env <kind>', `${settingHelp('env.kind')} Default: the run’s, else qa.`)
      .option(
        '--base-url <url>',
        'openai: server base URL such as http://localhost:8000/v1 (repeat for several servers); tinker: the engine’s root (policy.baseUrl), e.g. http://127.0.0.1:8080',
        collect,
      )
      .option(
        '--model <name|file>',
        'openai: model name sent to the server; tinker: the base model by its name there (policy.model); tiny-lm: the GGUF file (with --run: the run’s model by default)',
      )
      .option('--mode <mode>', 'openai: completions (one growing prompt) or chat', 'completions')
      .option(
        '--api-key-file <file>',
        'openai, tinker: a file whose first line is the server’s API key (else TRACE_RL_API_KEY, else OPENAI_API_KEY for openai, TINKER_API_KEY for tinker; never stored)',
      )
      .option('--run <dir>', `embedded or tiny-lm: a training run folder; its last checkpoint is ${what} and its env settings are the defaults`)
      .option('--datasets <list>', `${settingHelp('env.datasets')} math: one dataset or JSONL file, held out as env.math.testDataset.`)
      .option('--retrieval <mode>', settingHelp('env.retrieval'))
      .option('--retriever-url <url>', settingHelp('env.retrieverUrl'))
      .option('--top-k <k>', settingHelp('env.topK'))
      .option(
        '--set <path=value...>',
        'any environment, engine or policy setting, checked as train checks it, e.g. --set env.successRule=em, --set policy.prompt=question (policy.kind is --policy’s)',
      )
      .option('--concurrency <n>', 'policy requests in flight at most', '8')
      .option('--retries <n>', 'attempts per policy call or tool step (1 = no retry)', '5')
      .option('--timeout-ms <ms>', 'per policy call or tool step', '60000')
      .option('--max-tokens <n>', 'generated tokens per turn at most', '512')
  );
}
