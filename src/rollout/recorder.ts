import { z } from 'zod';
import { PolicyCallError } from '../policy/errors.ts';
import type { PolicyOutput } from '../policy/types.ts';
import type { StepOutcome } from '../env/types.ts';
import { turnEnvSchema } from '../tree/serialize.ts';

/**
 * Record / replay. Every policy response and every tool result of a run is stored under a key that
 * depends only on where it happened in the tree, never on timing:
 *   `policy:<node id>#<attempt>` and `tool:<node id>#<attempt>`
 * (node ids are slot paths, attempts count from 1). A replay run reads the same keys back, so it
 * rebuilds identical trees with no inference server or retriever. Failures are recorded too
 * (`policy_error` / `tool_error`), so a replay walks the same retry path. Cancellation is not
 * recorded: it is a property of the run, not of the server.
 *
 * File format (docs/rollout.md): JSON Lines, one entry per line, in completion order; the keys make
 * the order irrelevant.
 */

const tokenSpanSchema = z.object({
  ids: z.array(z.number()),
  logprobs: z.array(z.number()),
  mask: z.array(z.number()),
  prompt: z.enum(['ids', 'text']).optional(),
  sequenceId: z.string().max(256).optional(),
});

const policyOutputSchema = z.object({
  text: z.string(),
  action: z.object({ type: z.string(), input: z.string() }).optional(),
  thought: z.string().optional(),
  tokens: tokenSpanSchema.optional(),
  generatedTokens: z.number().int().nonnegative(),
  logprob: z.number().optional(),
  entropy: z.number().optional(),
});

const stepRecordSchema = z.object({
  observation: z.string(),
  done: z.boolean(),
  reward: z.number().optional(),
  score: z.number().optional(),
  reason: z.string().optional(),
  invalid: z.boolean().optional(),
  env: turnEnvSchema.optional(),
});

export const tapeEntrySchema = z.discriminatedUnion('kind', [
  z.object({ key: z.string(), kind: z.literal('policy'), output: policyOutputSchema }),
  z.object({
    key: z.string(),
    kind: z.literal('policy_error'),
    code: z.enum(['timeout', 'server_error', 'parse_error', 'context_overflow']),
    message: z.string(),
    retryable: z.boolean(),
  }),
  z.object({ key: z.string(), kind: z.literal('step'), outcome: stepRecordSchema }),
  z.object({ key: z.string(), kind: z.literal('tool_error'), message: z.string() }),
]);

export type TapeEntry = z.output<typeof tapeEntrySchema>;
/** A step outcome without the environment state (states are not recorded; replay does not need them). */
export type StepRecord = z.output<typeof stepRecordSchema>;

/** Raised by a replay that meets a call the recording does not hold. */
export class ReplayMissError extends Error {
  override name = 'ReplayMissError';
}

/** Raised when a recording file is malformed; names the line. */
export class RecordingFormatError extends Error {
  override name = 'RecordingFormatError';
}

/** A tool step failed (raised by environments or reproduced from a recording). */
export class ToolStepError extends Error {
  override name = 'ToolStepError';
}

/** The recorded calls of one or more runs, keyed as described above. */
export class Recording {
  readonly entries = new Map<string, TapeEntry>();

  add(entry: TapeEntry): void {
    this.entries.set(entry.key, entry);
  }

  get size(): number {
    return this.entries.size;
  }

  toJSONL(): string {
    return [...this.entries.values()].map((e) => JSON.stringify(e)).join('\n') + (this.entries.size ? '\n' : '');
  }

  static fromJSONL(text: string, source = 'recording'): Recording {
    const rec = new Recording();
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        throw new RecordingFormatError(`${source}:${i + 1}: not JSON (${(e as Error).message}); each line must be one JSON entry`);
      }
      const parsed = tapeEntrySchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new RecordingFormatError(`${source}:${i + 1}: field "${issue.path.join('.')}": ${issue.message}`);
      }
      rec.add(parsed.data);
    });
    return rec;
  }
}

/**
 * How the engine reaches the outside world. `live` calls through, `record` calls through and keeps
 * every result, `replay` answers from a recording without calling anything.
 */
export interface Tape {
  readonly mode: 'live' | 'record' | 'replay';
  /** `at`: the call's node id and attempt (`<node id>#<attempt>`); the tape's key is `policy:<at>` (a live tape needs none). */
  policy(at: string, call: () => Promise<PolicyOutput>): Promise<PolicyOutput>;
  /** The state is undefined in replay mode (the engine keeps its previous state, which is never used). */
  step<S>(at: string, call: () => Promise<StepOutcome<S>>): Promise<{ record: StepRecord; state?: S }>;
}

/**
 * The outcome's recorded fields, the ones a replay reads back (anything else an environment adds is
 * dropped, as a replay drops it). A field-by-field copy: a JSON round trip of every tool result was a
 * visible share of the engine's turn at scale.
 */
function stripState<S>(o: StepOutcome<S>): StepRecord {
  const record: StepRecord = { observation: o.observation, done: o.done };
  if (o.reward !== undefined) record.reward = o.reward;
  if (o.score !== undefined) record.score = o.score;
  if (o.reason !== undefined) record.reason = o.reason;
  if (o.invalid !== undefined) record.invalid = o.invalid;
  if (o.env !== undefined) record.env = o.env;
  return record;
}

export const liveTape: Tape = {
  mode: 'live',
  policy: (_key, call) => call(),
  // A reaction, not an async function (one frame and its await's closures less a turn), taking the same
  // turns of the microtask queue: the outcome's, then the caller's.
  step: (_key, call) => call().then(liveRecord),
};

function liveRecord<S>(o: StepOutcome<S>): { record: StepRecord; state?: S } {
  return { record: stripState(o), state: o.state };
}

/** Calls through and stores every response and every data failure in `into`. */
export function recordTape(into: Recording, isCancellation: (e: unknown) => boolean): Tape {
  return {
    mode: 'record',
    async policy(at, call) {
      const key = `policy:${at}`;
      try {
        const output = await call();
        into.add({ key, kind: 'policy', output: JSON.parse(JSON.stringify(output)) as PolicyOutput });
        return output;
      } catch (e) {
        if (e instanceof PolicyCallError) into.add({ key, kind: 'policy_error', code: e.code, message: e.message, retryable: e.retryable });
        throw e;
      }
    },
    async step(at, call) {
      const key = `tool:${at}`;
      try {
        const o = await call();
        const record = stripState(o);
        into.add({ key, kind: 'step', outcome: record });
        return { record, state: o.state };
      } catch (e) {
        if (!isCancellation(e)) into.add({ key, kind: 'tool_error', message: e instanceof Error ? e.message : String(e) });
        throw e;
      }
    },
  };
}

/** Answers every call from `from`; a missing key is a ReplayMissError (the run diverged or settings differ). */
export function replayTape(from: Recording): Tape {
  const get = (key: string): TapeEntry => {
    const e = from.entries.get(key);
    if (!e) throw new ReplayMissError(`no recorded entry "${key}": replay with the same prompts, plan, seed and engine settings as the recording`);
    return e;
  };
  return {
    mode: 'replay',
    async policy(at) {
      const key = `policy:${at}`;
      const e = get(key);
      if (e.kind === 'policy') return structuredClone(e.output) as PolicyOutput;
      if (e.kind === 'policy_error') throw new PolicyCallError(e.code, e.message, e.retryable);
      throw new ReplayMissError(`entry "${key}" is a ${e.kind}, expected a policy response`);
    },
    async step(at) {
      const key = `tool:${at}`;
      const e = get(key);
      if (e.kind === 'step') return { record: structuredClone(e.outcome) };
      if (e.kind === 'tool_error') throw new ToolStepError(e.message);
      throw new ReplayMissError(`entry "${key}" is a ${e.kind}, expected a tool result`);
    },
  };
}
