import type { Command } from 'commander';
import { escapeControl } from '../../util/escape-control.ts';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROLLOUT_NOTE, type RolloutNote } from '../../export/run-tokenizer.ts';
import { EXPORT_FORMATS, isExportFormat } from '../../export/write.ts';
import {
  ATROPOS_LAYOUTS,
  AtroposClient,
  AtroposError,
  isAtroposLayout,
  RolloutStepFailed,
  runRolloutService,
  WeightsGate,
  type RolloutServiceEvent,
} from '../../service/index.ts';
import { buildPolicy, type PolicySettings } from '../../policy/registry.ts';
import { resolveApiKey } from '../../policy/openai/api-key.ts';
import { failureCauses } from '../../rollout/index.ts';
import { reportFailures } from '../failures.ts';
import { progressReporter } from '../progress.ts';
import { interruptible } from '../until-signal.ts';
import { parseTrainConfig, storedTrainConfig, type TrainConfig } from '../../train/index.ts';
import { fixFor, keptRunClause, serverFailure, serverFailureLine, serverOfFailures } from '../server-failure.ts';
import { policyFromFlags } from '../policy-flags.ts';
import { RunStore } from '../../store/index.ts';
import { parsePort, UsageError, writeJson } from '../io.ts';
import { controlToken } from '../../http/control.ts';
import { redactSecret } from '../../util/redact.ts';
import { addTokenizerOptions, asUsage, transcriptFromOptions } from './export.ts';
import { ServerTokenizerError } from '../../tokens/server-tokenizer.ts';
import { addConfigOptions, rawConfig } from '../config-flags.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `trace-rl rollout --policy openai --base-url URL --steps N --out DIR`: the rollout service for an
 * external trainer. Prints one JSON line per event on stdout: `batch` (a batch file is ready, with its
 * status: complete, or partial when some trajectories failed), `waiting` (which file to create, or
 * which URL to POST, once new weights are loaded), `weights`, and `done` (status finished, stopped or
 * failed). Progress, per-step summaries and failures go to stderr. A step whose every trajectory
 * failed ends the service: exit code 1, one stderr line naming the server and the cause. Ctrl-C stops
 * at the next safe point and exits 130. The server's API key comes from TRACE_RL_API_KEY,
 * OPENAI_API_KEY or --api-key-file, never a flag value.
 */
export function register(program: Command): void {
  const cmd = program
    .command('rollout')
    .description('serve TRACE rollouts to an external trainer (verl, TRL): one batch file per step, then wait for its new weights; see docs/export.md')
    .option('--policy <kind>', 'policy kind: openai (an OpenAI-compatible server: vLLM, SGLang, llama.cpp); required for a new run')
    .option('--base-url <url>', 'server base URL such as http://localhost:8000/v1 (repeat for several servers)', collect)
    .option('--model <name>', 'model name sent to the server', 'default')
    .option('--mode <mode>', 'tokens (token ids in, token ids out: exact), completions (growing text prompt) or chat', 'completions')
    .option('--extras <kind>', 'vllm (ask for token ids) or none', 'none')
    .option(
      '--api-key-file <file>',
      'a file whose first line is the servers\u2019 API key (else TRACE_RL_API_KEY, else OPENAI_API_KEY; the key is never stored)',
    )
    .option('--out <dir>', 'run folder to create: run.sqlite, batches/step-N.*, weights-step-N.ready')
    .option(
      '--resume <dir>',
      'continue the rollout run in this folder from its last completed step: its stored configuration, tokenizer and format; a step pushed to --atropos is not pushed again',
    )
    .option('--format <form>', `batch form: ${EXPORT_FORMATS.join(', ')}`, 'verl')
    .option('--no-check-server-ids', 'keep server token ids even when --tokenizer does not reproduce the text')
    .option('--listen <port>', 'also accept POST /weights {"step": N} on this port (0 = any free port)')
    .option(
      '--reload-url <url>',
      'with --listen: a /weights body\'s "model" (new GGUF) is sent to this trace-rl serve --allow-reload (POST <url>/reload) before the next step',
    )
    .option(
      '--control-token-file <file>',
      'with --listen: POST /weights must send this file\u2019s first line as Authorization: Bearer (default: a new token, printed once at start)',
    )
    .option('--allow-host <name>', 'with --listen: also accept this Host name for POST /weights besides loopback and the bound address (repeat)', collect)
    .option('--reload-token-file <file>', 'with --reload-url: a file whose first line is that trace-rl serve\u2019s control token (its --control-token-file)')
    .option(
      '--atropos <url>',
      'also push every step to this Atropos trajectory API (verl-recipe atropos trainer; docs/atropos.md); waits there for the trainer instead of --listen',
    )
    .option('--atropos-layout <layout>', `how rows become Atropos groups: ${ATROPOS_LAYOUTS.join(' or ')} (docs/atropos.md)`, 'turns')
    .option(
      '--atropos-api-key-file <file>',
      'a file whose first line is the Atropos API\u2019s key, for an API behind an authenticating proxy (else TRACE_RL_ATROPOS_API_KEY; never stored)',
    )
    .option('--quiet', 'no progress on stderr (failures are still reported)');
  addTokenizerOptions(cmd);
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    const given = (key: string) => cmd.getOptionValueSource(key) === 'cli';
    const resume = opts.resume === undefined ? undefined : String(opts.resume);
    const stored = resume === undefined ? undefined : storedRollout(resume, opts, given);
    if (!stored) {
      if (opts.out === undefined) throw new UsageError('--out <dir> is required: the run folder to create (or --resume DIR to continue one)');
      if (opts.policy === undefined) throw new UsageError('--policy <kind> is required: openai');
      if (opts.policy !== 'openai')
        throw new UsageError(`--policy ${String(opts.policy)}: only "openai" is supported (the embedded policy trains itself with trace-rl train)`);
    }
    const made: RolloutNote = stored?.note ?? rolloutNote(opts);
    const format = made.format;
    if (!isExportFormat(format)) throw new UsageError(`--format ${format}: choose one of ${EXPORT_FORMATS.join(', ')}`);
    const settings = stored
      ? (stored.config.policy as PolicySettings<'openai'>)
      : (policyFromFlags(
          {
            kind: 'openai',
            baseUrls: opts.baseUrl ?? [],
            model: opts.model,
            mode: opts.mode,
            extras: opts.extras,
            ...(opts.apiKeyFile !== undefined ? { apiKeyFile: path.resolve(String(opts.apiKeyFile)) } : {}),
          },
          { baseUrls: '--base-url', model: '--model', mode: '--mode', extras: '--extras', apiKeyFile: '--api-key-file' },
        ) as PolicySettings<'openai'>);
    let port: number | undefined;
    if (opts.listen !== undefined) {
      port = parsePort('--listen', opts.listen);
    }
    const atropos = atroposFromOptions({ ...opts, atroposLayout: stored?.note.atroposLayout ?? opts.atroposLayout });
    // Ids go straight to the model in token mode: the byte tokenizer's would be wrong for any real model.
    if (settings.mode === 'tokens' && made.tokenizer.tokenizer === 'bytes')
      throw new UsageError('--mode tokens sends token ids to the model: give its tokenizer with --tokenizer hf:DIR, qwen3 or server');
    const apiKey = resolveApiKey({ file: settings.apiKeyFile, env: process.env })?.key;
    const out = resume ?? String(opts.out);
    let transcript;
    try {
      transcript = await transcriptFromOptions(made.tokenizer, settings.baseUrls[0], apiKey);
    } catch (e) {
      if (!(e instanceof ServerTokenizerError)) throw e;
      reportTokenizerFailed(e, 0, out, apiKey);
      return;
    }
    // The run stores the server policy it rolled out with, like any run its policy (the key file's path, never the key).
    const config = stored?.config ?? parseTrainConfig({ ...rawConfig(opts), policy: settings });
    if (!stored) RunStore.checkNew(out);
    const { policy } = await buildPolicy(settings, { envKind: config.env.kind, concurrency: config.engine.concurrency, transcript });
    const reloadUrl = opts.reloadUrl === undefined ? undefined : String(opts.reloadUrl).replace(/\/+$/, '').replace(/\/v1$/, '');
    // serve's /reload takes its own control token, never the inference servers' API key; what it answers
    // is cut of both before it reaches a message (a server may echo what it was sent).
    const reloadToken = opts.reloadTokenFile === undefined ? undefined : controlToken(path.resolve(String(opts.reloadTokenFile))).token;
    const reload = reloadUrl
      ? async (model: string) => {
          const headers = { 'content-type': 'application/json', ...(reloadToken ? { authorization: `Bearer ${reloadToken}` } : {}) };
          const res = await fetch(`${reloadUrl}/reload`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ model }),
            signal: AbortSignal.timeout(RELOAD_TIMEOUT_MS),
          });
          if (!res.ok)
            throw new Error(
              `${reloadUrl}/reload answered HTTP ${res.status}: ${redactSecret(redactSecret(await res.text(), reloadToken), apiKey).slice(0, 300)}`,
            );
        }
      : undefined;
    const control = opts.controlTokenFile === undefined ? undefined : controlToken(path.resolve(String(opts.controlTokenFile))).token;
    // With an Atropos API the trainer loads its own weights: the service waits on the API, not at a gate.
    const gate = atropos
      ? undefined
      : new WeightsGate({
          dir: out,
          port,
          ...(reload ? { reload } : {}),
          ...(control ? { token: control } : {}),
          allowHosts: (opts.allowHost as string[] | undefined) ?? [],
        });
    const interrupt = interruptible(
      `the steps stored so far and their batches are kept; continue with trace-rl rollout --resume ${out} (Ctrl-C again to quit at once)`,
    );
    const progress = opts.quiet
      ? undefined
      : progressReporter({ steps: config.steps, label: 'trace-rl rollout', now: () => performance.now(), linesEveryMs: 5000 });
    if (!opts.quiet)
      process.stderr.write(
        `trace-rl rollout: ${stored ? `resuming ${out}: ` : ''}${config.steps} step(s) of ${config.strategy.budget} ${config.strategy.unit} from ${settings.baseUrls.join(', ')} (${settings.model}); batches in ${path.join(out, 'batches')}${atropos ? `; groups (${atropos.layout}) to ${atropos.client.url}` : ''}\n`,
      );
    const output = serviceOutput(Boolean(opts.quiet), progress);
    try {
      await gate?.start();
      if (gate?.url && gate.generatedToken)
        process.stderr.write(`trace-rl rollout: control token for POST ${gate.url}/weights (send as Authorization: Bearer <token>): ${gate.token}\n`);
      const result = await runRolloutService({
        out,
        config,
        ...(stored ? { resume: true } : { notes: { [ROLLOUT_NOTE]: made } }),
        policy,
        format,
        tokenizer: transcript.tokenizer,
        template: transcript.template,
        checkServerIds: made.checkServerIds,
        ...(gate ? { gate } : {}),
        ...(atropos ? { atropos } : {}),
        servers: settings.baseUrls,
        clock: () => performance.now(),
        wallClock: () => Date.now(),
        signal: interrupt.signal,
        onEvent: output.onEvent,
      });
      progress?.stop();
      writeJson({ event: 'done', status: result.status, batches: output.written(), out });
      if (result.status === 'stopped') process.exitCode = 130;
    } catch (e) {
      progress?.stop();
      if (e instanceof AtroposError) reportAtroposFailed(e, output.written(), out);
      else if (e instanceof RolloutStepFailed) reportStepFailed(e, output.written(), out);
      else if (e instanceof ServerTokenizerError) reportTokenizerFailed(e, output.written(), out, apiKey);
      else {
        const failure = serverFailure(e);
        const message = redactSecret(String((e as Error)?.message ?? e), apiKey);
        // Whatever ended the service, the trainer reading stdout is told it ended: `done` is always the last event.
        writeJson({ event: 'done', status: 'failed', batches: output.written(), out, error: message });
        if (!failure) throw asUsage(e);
        process.stderr.write(redactSecret(serverFailureLine('rollout', failure, resumeClause(out)), apiKey) + '\n');
        process.exitCode = 1;
      }
    } finally {
      interrupt.done();
      await gate?.close();
      await atropos?.client.disconnect();
    }
  });
}

function rolloutNote(opts: Record<string, unknown>): RolloutNote {
  const tokenizer: Record<string, unknown> = { tokenizer: String(opts.tokenizer ?? 'bytes') };
  if (opts.chatTemplate === true) tokenizer.chatTemplate = true;
  for (const key of ['thinking', 'system'] as const) if (opts[key] !== undefined) tokenizer[key] = String(opts[key]);
  if (opts.tools !== undefined) tokenizer.tools = path.resolve(String(opts.tools));
  return {
    format: String(opts.format),
    tokenizer,
    checkServerIds: opts.checkServerIds !== false,
    ...(opts.atropos !== undefined ? { atroposLayout: String(opts.atroposLayout) } : {}),
  };
}

/** Flags a resumed rollout may take: where to wait for the trainer, keys, and output; the rest is the run's. */
const RESUME_FLAGS = new Set([
  'resume',
  'quiet',
  'listen',
  'reloadUrl',
  'controlTokenFile',
  'allowHost',
  'reloadTokenFile',
  'atropos',
  'atroposApiKeyFile',
  'apiKeyFile',
]);

/** `--resume DIR`: the rollout run's configuration and note; a flag that would change what the run is made of is refused. */
function storedRollout(dir: string, opts: Record<string, unknown>, given: (key: string) => boolean): { config: TrainConfig; note: RolloutNote } {
  const changing = Object.keys(opts).filter((k) => given(k) && !RESUME_FLAGS.has(k));
  if (changing.length > 0)
    throw new UsageError(
      `--resume ${dir}: ${changing.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} cannot change on resume (the run keeps its policy, tokenizer, format and configuration); drop ${changing.length > 1 ? 'them' : 'it'}, or start a new run with --out`,
    );
  let store: RunStore;
  try {
    store = RunStore.open(dir, { readonly: true });
  } catch (e) {
    throw asUsage(e);
  }
  try {
    if (store.kind() !== 'rollout')
      throw new UsageError(`--resume ${dir}: that run was made by trace-rl ${store.kind()}; continue it with trace-rl ${store.kind()} --resume ${dir}`);
    const note = store.note<RolloutNote>(ROLLOUT_NOTE);
    if (!note)
      throw new UsageError(`--resume ${dir}: the run keeps no note of its tokenizer and format (made by an older trace-rl); start a new run with --out`);
    const config = storedTrainConfig(store);
    if (note.atroposLayout !== undefined && opts.atropos === undefined)
      throw new UsageError(`--resume ${dir}: the run pushed its steps to an Atropos API; give --atropos URL again`);
    if (note.atroposLayout === undefined && opts.atropos !== undefined)
      throw new UsageError(`--resume ${dir}: the run waited at a weights gate, not an Atropos API; drop --atropos`);
    if (store.status() === 'finished') throw new UsageError(`--resume ${dir}: the run has finished all its ${config.steps} steps; start a new run with --out`);
    return { config, note };
  } finally {
    store.close();
  }
}

/** After a failure: what the run folder keeps and how to continue it. */
function resumeClause(out: string): string {
  return keptRunClause(out, `trace-rl rollout --resume ${out}`);
}

/**
 * The service's events as the trainer reads them (JSON lines on stdout) and as a person does (stderr:
 * the batch, a partial step's failures, a missing-log-probabilities warning once, and progress).
 */
function serviceOutput(quiet: boolean, progress: ReturnType<typeof progressReporter> | undefined) {
  let written = 0;
  let warned = false;
  return {
    written: () => written,
    onEvent(e: RolloutServiceEvent): void {
      if (e.kind === 'batch') {
        written++;
        writeJson({ event: 'batch', step: e.step, file: e.file, rows: e.rows, leaves: e.leaves, status: e.status, failed: e.failures.failed });
        reportPartial(e);
        // Said once: every batch from the same server is alike.
        if (e.warning && !warned) process.stderr.write(`trace-rl rollout: ${e.warning}\n`);
        warned ||= e.warning !== undefined;
        if (!quiet) process.stderr.write(`trace-rl rollout: step ${e.step}: batch ${e.file}: ${e.rows} rows, ${e.status}\n`);
      } else if (e.kind === 'waiting') writeJson({ event: 'waiting', step: e.step, file: e.file, ...(e.url ? { url: e.url } : {}) });
      else if (e.kind === 'weights') writeJson({ event: 'weights', step: e.step });
      else if (e.kind === 'atropos') {
        writeJson({ event: 'atropos', step: e.step, url: e.url, groups: e.groups, sequences: e.sequences });
        if (e.overLength > 0)
          process.stderr.write(
            `trace-rl rollout: step ${e.step}: ${e.overLength} of ${e.sequences} sequences are longer than the trainer's max_token_len (it truncates or drops them): raise data.max_prompt_length / max_response_length there, or lower engine.maxTurns / maxTokensPerTurn here\n`,
          );
        if (!quiet) process.stderr.write(`trace-rl rollout: step ${e.step}: ${e.groups} groups, ${e.sequences} sequences pushed to ${e.url}\n`);
      } else if (e.kind === 'taken') writeJson({ event: 'taken', step: e.step, outstanding: e.outstanding });
      else if (e.kind === 'trainer-finished') {
        writeJson({ event: 'trainer-finished', step: e.step, url: e.url, trainer_step: e.trainerStep, trainer_steps: e.trainerSteps });
        // Said even with --quiet: the run ends before its last step, and why.
        process.stderr.write(
          `trace-rl rollout: the trainer at ${e.url} has taken all ${e.trainerSteps} batches it registered for (its num_steps): no later step would be trained, so the run ends after step ${e.step} (the steps so far are kept; a new trainer's run continues with --resume)\n`,
        );
      } else progress?.onEvent(e);
    },
  };
}

/**
 * `--atropos URL [--atropos-layout L] [--atropos-api-key-file F]` → the client and layout, or none.
 * The key follows the servers' key rules (a file's first line, else a variable; never a flag value)
 * with a variable of its own: the inference servers' key is not sent to another service.
 */
function atroposFromOptions(opts: Record<string, unknown>) {
  const layout = String(opts.atroposLayout);
  if (opts.atropos === undefined) {
    if (opts.atroposApiKeyFile !== undefined || layout !== 'turns') throw new UsageError('--atropos-layout and --atropos-api-key-file need --atropos URL');
    return undefined;
  }
  if (opts.listen !== undefined || opts.reloadUrl !== undefined)
    throw new UsageError('--atropos replaces --listen and --reload-url: the Atropos trainer loads its own weights, and the service waits on the API');
  if (!isAtroposLayout(layout)) throw new UsageError(`--atropos-layout ${layout}: choose one of ${ATROPOS_LAYOUTS.join(', ')}`);
  // Said, not refused: the API cannot tell which trainer pulls from it, and a trainer that honours the
  // masks and reads `advantages` (Atropos's own) trains the trees layout as meant (docs/atropos.md).
  if (layout === 'trees')
    process.stderr.write(
      "trace-rl rollout: warning: --atropos-layout trees sends whole rows, observations inside them; verl-recipe's atropos trainer trains every token after a sequence's first trained one (observations included) and GRPO over each group's rewards, not TRACE's advantages: with that trainer use the default --atropos-layout turns\n",
    );
  let url: URL;
  try {
    url = new URL(String(opts.atropos));
  } catch {
    throw new UsageError(`--atropos ${String(opts.atropos)}: not a URL; give the trajectory API's address, e.g. http://localhost:8000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--atropos ${String(opts.atropos)}: use an http:// or https:// URL`);
  const file = opts.atroposApiKeyFile === undefined ? undefined : path.resolve(String(opts.atroposApiKeyFile));
  const apiKey = resolveApiKey({ file, env: process.env, variables: ['TRACE_RL_ATROPOS_API_KEY'], setting: '--atropos-api-key-file' })?.key;
  const client = new AtroposClient({
    url: url.toString(),
    ...(apiKey ? { apiKey } : {}),
    onWait: (message) => process.stderr.write(`trace-rl rollout: ${message}\n`),
  });
  return { client, layout };
}

/** The Atropos API refused or was unreachable after the retries: `done` with status failed, one stderr line, exit 1. */
function reportAtroposFailed(e: AtroposError, written: number, out: string): void {
  writeJson({ event: 'done', status: 'failed', batches: written, out, error: e.message });
  process.stderr.write(
    `trace-rl rollout: the Atropos API failed: ${escapeControl(e.message)}; check --atropos and that the trainer's API is up; ${resumeClause(out)}\n`,
  );
  process.exitCode = 1;
}

/**
 * The server's /tokenize or /detokenize failed (at start, in a token-mode call, or while a batch was
 * written): the server's failure, like a step whose every call failed: `done` with status failed,
 * one stderr line, exit 1.
 */
function reportTokenizerFailed(e: ServerTokenizerError, written: number, out: string, apiKey: string | undefined): void {
  const message = redactSecret(e.message, apiKey);
  writeJson({ event: 'done', status: 'failed', batches: written, out, error: message });
  process.stderr.write(
    `trace-rl rollout: the server tokenizer failed: ${escapeControl(message)}; ${written > 0 ? `the ${written} batch file(s) in ${path.join(out, 'batches')} are kept` : 'no batch was written'} (check that the server is up and serves /tokenize and /detokenize, or use --tokenizer hf:DIR)\n`,
  );
  process.exitCode = 1;
}

/** Every trajectory of a step failed: `done` with status failed for the trainer, one line (exit 1) for the person. */
function reportStepFailed(e: RolloutStepFailed, written: number, out: string): void {
  writeJson({ event: 'done', status: 'failed', batches: written, out, error: e.message });
  reportFailures({
    ...stepFailures(e.failures, e.step),
    kept: `no batch was written for it; ${resumeClause(out)}`,
    whenAll: `every one failed: ${fixFor(e.failures.first ?? '', serverOfFailures(e.failures))} (${serverOfFailures(e.failures) === 'the environment server' ? 'env.url' : e.servers.join(', ')})`,
  });
}

/** The part of a failure report that says which step's trajectories failed and why. */
function stepFailures(failures: RolloutStepFailed['failures'], step: number) {
  return {
    command: 'trace-rl rollout',
    failed: failures.failed,
    total: failures.trajectories,
    unit: `trajectories of step ${step}`,
    causes: failureCauses(failures),
  };
}

/** Longest a trace-rl serve may take to load new weights. */
const RELOAD_TIMEOUT_MS = 10 * 60_000;

/** A batch some of whose trajectories failed: how many, why, and that the batch holds only the rest. */
function reportPartial(e: Extract<RolloutServiceEvent, { kind: 'batch' }>): void {
  reportFailures({
    ...stepFailures(e.failures, e.step),
    kept: `the batch holds the ${e.rows} rows of the others and is marked partial (${e.file}, and its .meta.json)`,
    whenAll: '',
  });
}
