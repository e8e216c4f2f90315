/**
 * Malformed-input generators and per-parser checks, shared by test/reliability/bad-input.test.ts
 * (a hundred-odd inputs per parser) and bench/reliability (thousands). Each parser gets three kinds
 * of bad input: random text, random JSON values, and mutations of a valid input (a field removed,
 * retyped, out of range, an unknown field added, or the text cut short). A check returns 'rejected'
 * (the one-line error named the place) or 'accepted' (the input happened to be valid), and throws
 * when the input was handled badly: a crash, a multi-line error, a message that names no place, or
 * output written despite the error.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../src/cli/io.ts';
import { readConfigFile } from '../../src/cli/config-file.ts';
import { DatasetError, parseDatasetJsonl } from '../../src/env/qa/datasets.ts';
import { loadCorpus } from '../../src/env/search/retriever-server.ts';
import { GgufError } from '../../src/tinylm/gguf-format.ts';
import { readGguf } from '../../src/tinylm/gguf-read.ts';
import { writeGguf } from '../../src/tinylm/gguf-write.ts';
import { ConfigError, parseTrainConfig } from '../../src/train/config.ts';
import { runCli } from './cli-in-process.ts';

export type Verdict = 'rejected' | 'accepted';

export interface ParserCase<T> {
  name: string;
  arbitrary: fc.Arbitrary<T>;
  check(input: T): Promise<Verdict>;
}

export class BadHandlingError extends Error {
  override name = 'BadHandlingError';
}

function expectOneLine(message: string, place: RegExp, what: string): void {
  const text = message.replace(/\n$/, '');
  if (text.length === 0) throw new BadHandlingError(`${what}: empty error message`);
  if (text.includes('\n')) throw new BadHandlingError(`${what}: error spans ${text.split('\n').length} lines: ${JSON.stringify(text.slice(0, 300))}`);
  if (!place.test(text)) throw new BadHandlingError(`${what}: error does not name the place (${place}): ${JSON.stringify(text.slice(0, 300))}`);
}

/** Mutations of a valid JSON object: drop, retype, add, or nest a random value at a random key. */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const junk = fc.oneof(fc.anything(), fc.constantFrom(-1, 1e308, -0.5, 2.5, Number.MAX_SAFE_INTEGER, '', 'NaN', null, [], {}, true));
  return fc.oneof(
    fc.record({ key: fc.constantFrom(...keys) }).map(({ key }) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key))),
    fc.record({ key: fc.constantFrom(...keys), v: junk }).map(({ key, v }) => ({ ...valid, [key]: v })),
    fc
      .record({ key: fc.string({ minLength: 1, maxLength: 8 }), v: junk })
      .filter(({ key }) => !keys.includes(key))
      .map(({ key, v }) => ({ ...valid, [key]: v })),
    fc.record({ key: fc.constantFrom(...keys), i: fc.nat(5), v: junk }).map(({ key, i, v }) => {
      const arr = Array.isArray(valid[key]) ? [...(valid[key] as unknown[])] : [];
      arr[Math.min(i, arr.length)] = v;
      return { ...valid, [key]: arr };
    }),
  );
}

/** Random text, random JSON, mutated valid JSON, or valid JSON cut short. */
function textInputs(valid: Record<string, unknown>): fc.Arbitrary<string> {
  const full = JSON.stringify(valid);
  return fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.json({ maxDepth: 3 }),
    mutated(valid).map((v) => JSON.stringify(v) ?? 'undefined'),
    fc.nat(full.length - 1).map((n) => full.slice(0, n)),
  );
}

/** A stdin-JSON command: exit 0 with JSON output, or exit 2 with one stderr line and nothing on stdout. */
function stdinCommand(name: string, args: string[], valid: Record<string, unknown>, place: RegExp): ParserCase<string> {
  return {
    name,
    arbitrary: textInputs(valid),
    async check(input) {
      const r = await runCli(args, input);
      if (r.code === 0) {
        for (const line of r.stdout.split('\n').filter(Boolean)) JSON.parse(line);
        return 'accepted';
      }
      if (r.code !== 2) throw new BadHandlingError(`${name}: exit ${r.code} for ${JSON.stringify(input).slice(0, 200)}: ${r.stderr}`);
      if (r.stdout !== '') throw new BadHandlingError(`${name}: wrote to stdout despite the error`);
      expectOneLine(r.stderr, place, `${name} ${JSON.stringify(input).slice(0, 200)}`);
      return 'rejected';
    },
  };
}

const scratch = () => mkdtempSync(join(tmpdir(), 'trace-malformed-'));

/** The configuration path of `trace-rl train`: read the file, then validate it. */
function configCase(): ParserCase<{ text: string; ext: 'yaml' | 'json' }> {
  const valid = { seed: 1, steps: 3, pool: 8, strategy: { name: 'trace', budget: 16 }, env: { kind: 'world', questions: 100 }, eval: { every: 2 } };
  const yamlish = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.constantFrom(
      'steps: [1, 2',
      'strategy:\n  name: trace\n budget: 3',
      'a: b: c',
      '- 1\n- 2',
      '"unterminated',
      'steps: 3\nsteps: 4',
      '\t- tab',
      'seed: !!binary x',
    ),
  );
  return {
    name: 'config file (YAML/JSON)',
    arbitrary: fc.oneof(
      textInputs(valid).map((text) => ({ text, ext: 'json' as const })),
      yamlish.map((text) => ({ text, ext: 'yaml' as const })),
    ),
    async check({ text, ext }) {
      const dir = scratch();
      const file = join(dir, `run.${ext}`);
      writeFileSync(file, text);
      try {
        parseTrainConfig(readConfigFile(file));
        return 'accepted';
      } catch (e) {
        if (!(e instanceof UsageError || e instanceof ConfigError))
          throw new BadHandlingError(`config ${JSON.stringify(text).slice(0, 200)}: ${(e as Error).name}: ${(e as Error).message}`);
        expectOneLine(
          e.message,
          e instanceof ConfigError ? /config(\.[\w.]+)?:/ : new RegExp(`${file.replace(/[.]/g, '\\.')}(:\\d+:\\d+)?:`),
          `config ${JSON.stringify(text).slice(0, 200)}`,
        );
        return 'rejected';
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const validHotpot = {
  id: 'h1',
  question: 'Who wrote it?',
  answer: 'Ann',
  type: 'bridge',
  context: [['Ann', ['Ann wrote it.']]],
  supporting_facts: [['Ann', 0]],
};
const validMusique = {
  id: '2hop__1',
  question: 'Where?',
  answer: 'Oslo',
  answer_aliases: [],
  paragraphs: [{ idx: 0, title: 'Oslo', paragraph_text: 'Oslo is.', is_supporting: true }],
};

/**
 * JSONL files where exactly one line is bad: the error must name that file and that line. Valid
 * lines around it make the line number meaningful. The text is written to a real file.
 */
function jsonlCase(
  name: string,
  good: string[],
  badLine: fc.Arbitrary<string>,
  parse: (text: string, file: string) => unknown,
  isOwnError: (e: unknown) => boolean,
): ParserCase<{ before: number; bad: string; after: number }> {
  return {
    name,
    arbitrary: fc.record({ before: fc.nat(4), bad: badLine, after: fc.nat(3) }),
    async check({ before, bad, after }) {
      const lines = [
        ...Array.from({ length: before }, (_, i) => good[i % good.length]!),
        bad,
        ...Array.from({ length: after }, (_, i) => good[(before + i) % good.length]!),
      ];
      const dir = scratch();
      const file = join(dir, 'input.jsonl');
      writeFileSync(file, lines.join('\n'));
      try {
        parse(lines.join('\n'), file);
        return 'accepted';
      } catch (e) {
        if (!isOwnError(e)) throw new BadHandlingError(`${name}: ${(e as Error).name}: ${(e as Error).message} for ${JSON.stringify(bad).slice(0, 200)}`);
        // Blank lines are skipped, so a bad line's number is its position in the file.
        expectOneLine((e as Error).message, new RegExp(`^${escape(file)}:${before + 1}: `), `${name} ${JSON.stringify(bad).slice(0, 200)}`);
        return 'rejected';
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const oneLine = (s: string) => s.trim().length > 0 && !/[\n\r\u2028\u2029]/.test(s);

function datasetCase() {
  const bad = fc.oneof(textInputs(validHotpot), textInputs(validMusique)).filter(oneLine);
  // Good lines with ids of their own: a repeated id is itself a refused line (issue 31).
  const good = Array.from({ length: 8 }, (_, i) =>
    JSON.stringify(i % 2 === 0 ? { ...validHotpot, id: `good-${i}` } : { ...validMusique, id: `2hop__good${i}` }),
  );
  return jsonlCase(
    'dataset JSONL',
    good,
    bad,
    (text, file) => parseDatasetJsonl(text, file),
    (e) => e instanceof DatasetError,
  );
}

function corpusCase() {
  const valid = { id: 'd1', contents: '"Title"\nSome text.' };
  const bad = fc.oneof(textInputs(valid), textInputs({ title: 'T', text: 'x' })).filter(oneLine);
  return jsonlCase(
    'corpus JSONL',
    [JSON.stringify(valid), JSON.stringify({ title: 'T', text: 'x' })],
    bad,
    (_text, file) => loadCorpus(file),
    (e) => e instanceof DatasetError,
  );
}

/** A small valid GGUF, then truncated, bit-flipped, or with a count overwritten by a huge value. */
function ggufCase(): ParserCase<{ kind: 'truncate' | 'flip' | 'count'; at: number; byte: number }> {
  const valid = writeGguf(
    {
      'general.architecture': { type: 'string', value: 'llama' },
      'llama.context_length': { type: 'u32', value: 64 },
      'tokenizer.ggml.tokens': { type: 'array', of: 'string', value: ['<s>', 'a', 'b'] },
    },
    [{ name: 'w', dims: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) }],
  );
  return {
    name: 'GGUF model file',
    arbitrary: fc.record({
      kind: fc.constantFrom('truncate' as const, 'flip' as const, 'count' as const),
      at: fc.nat(valid.length - 1),
      byte: fc.integer({ min: 1, max: 255 }),
    }),
    async check({ kind, at, byte }) {
      const bytes = valid.slice();
      let input = bytes;
      if (kind === 'truncate') input = bytes.slice(0, at);
      else if (kind === 'flip') bytes[at] = bytes[at]! ^ byte;
      else new DataView(bytes.buffer).setBigUint64([8, 16][at % 2]!, 2n ** BigInt(20 + (byte % 44)), true);
      try {
        readGguf(input, 'model.gguf');
        return 'accepted';
      } catch (e) {
        if (!(e instanceof GgufError)) throw new BadHandlingError(`GGUF ${kind} at ${at}: ${(e as Error).name}: ${(e as Error).message}`);
        expectOneLine(e.message, /^model\.gguf: /, `GGUF ${kind} at ${at}`);
        return 'rejected';
      }
    },
  };
}

export function parserCases(): Array<ParserCase<unknown>> {
  const cases = [
    configCase(),
    datasetCase(),
    corpusCase(),
    stdinCommand('solve roots (stdin)', ['solve', 'roots'], { v: [0.2, 0.5, 0.9], budget: 6, min: 2, max: 4 }, /^trace-rl: (input|stdin)/),
    stdinCommand(
      'solve prefixes (stdin)',
      ['solve', 'prefixes'],
      {
        budget: 3,
        prefixes: [
          { id: 'a', q: 0.3, r: 0.5 },
          { id: 'b', q: 0.8, r: 0.1 },
        ],
      },
      /^trace-rl: (input|stdin)/,
    ),
    stdinCommand('solve knapsack (stdin)', ['solve', 'knapsack'], { p: [0.2, 0.5, 0.9], budget: 6, min: 2, max: 4 }, /^trace-rl: (input|stdin)/),
    stdinCommand(
      'advantages (stdin)',
      ['advantages', '--estimator', 'trace'],
      {
        nodes: [
          { id: 'q', parent: null },
          { id: 'q/0', parent: 'q', reward: 1 },
          { id: 'q/1', parent: 'q', reward: 0 },
        ],
      },
      /^trace-rl: (stdin|input|nodes|node)/,
    ),
    stdinCommand('score (stdin)', ['score', '--success'], { prediction: 'Paris', gold: ['Paris', 'paris'] }, /^trace-rl: stdin line \d+: /),
    ggufCase(),
  ];
  return cases as Array<ParserCase<unknown>>;
}

/** Feeds `runs` generated inputs to one parser; counts verdicts; rethrows the first mishandled input. */
export async function fuzzParser(c: ParserCase<unknown>, runs: number, seed: number): Promise<{ tried: number; rejected: number; accepted: number }> {
  const counts = { tried: 0, rejected: 0, accepted: 0 };
  await fc.assert(
    fc.asyncProperty(c.arbitrary, async (input) => {
      const v = await c.check(input);
      counts.tried++;
      counts[v]++;
    }),
    { numRuns: runs, seed, endOnFailure: true },
  );
  return counts;
}
