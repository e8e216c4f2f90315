import type { Command } from 'commander';
import { z } from 'zod';
import { type BfclEntry, CATEGORIES, checkAttempt, DEFAULT_BFCL_DIR, executeAttempt, loadAll, loadLongContextData, todayUtc } from '../../env/bfcl/index.ts';
import { jsonLines } from '../../util/json-lines.ts';
import { readStdin, UsageError } from '../io.ts';

/**
 * `trace-rl bfcl check|exec --data DIR`: JSON lines on stdin, one attempt per line,
 * `{"id": "multi_turn_base_0", "category": "base", "turns": [["cd(folder='document')", ...], ...]}`
 * (one list of Python-call strings per user turn). `check` prints `{"id", "valid", "error_type"}` per
 * line with BFCL's error type names; `exec` prints `{"id", "turns": [{"results": [...]}]}`, the text
 * each call returns. Every line is validated before anything runs: a bad line, an unknown id or a
 * category that does not match the id is one stderr message naming the line, exit 2, empty stdout.
 */
const row = z.object({
  id: z.string(),
  category: z.enum(CATEGORIES),
  turns: z.array(z.array(z.string())),
});

interface Job {
  entry: BfclEntry;
  turns: string[][];
}

async function readJobs(dataDir: string): Promise<Job[]> {
  let entries: Map<string, BfclEntry>;
  try {
    entries = loadAll(dataDir);
  } catch (e) {
    throw new UsageError(`--data ${dataDir}: cannot read BFCL data (${(e as Error).message}); point --data at a folder like the repository's data/bfcl`);
  }
  const jobs: Job[] = [];
  for (const { line, value, error } of jsonLines(await readStdin())) {
    if (error !== undefined) throw new UsageError(`stdin line ${line}: not valid JSON (${error})`);
    const parsed = row.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(
        `stdin line ${line}: ${issue.path.join('.') || 'line'}: ${issue.message}; expected {"id": string, "category": ${CATEGORIES.map((c) => `"${c}"`).join('|')}, "turns": string[][]}`,
      );
    }
    const entry = entries.get(parsed.data.id);
    if (!entry) throw new UsageError(`stdin line ${line}: id: unknown BFCL entry "${parsed.data.id}" (ids look like multi_turn_base_0)`);
    if (entry.category !== parsed.data.category) {
      throw new UsageError(`stdin line ${line}: category: "${parsed.data.category}" does not match ${entry.id} (its category is "${entry.category}")`);
    }
    jobs.push({ entry, turns: parsed.data.turns });
  }
  return jobs;
}

export function register(program: Command): void {
  const bfcl = program.command('bfcl').description('BFCL v4 multi-turn function calling: check or execute attempts with the official semantics');
  const options = (dataDir: string) => ({ longContextData: loadLongContextData(dataDir), today: todayUtc(new Date()) });
  bfcl
    .command('check')
    .description('JSON lines {"id","category","turns"} on stdin → {"id","valid","error_type"} per line (BFCL error type names)')
    .option('--data <dir>', 'folder with the BFCL data (entries, possible_answer/, func_doc/, long_context.json)', DEFAULT_BFCL_DIR)
    .action(async (opts: { data: string }) => {
      const jobs = await readJobs(opts.data);
      const o = options(opts.data);
      for (const { entry, turns } of jobs) {
        // One attempt line is one model step per turn; an empty turn is a turn without calls.
        const r = checkAttempt(
          entry,
          turns.map((calls) => [calls]),
          o,
        );
        process.stdout.write(`${JSON.stringify({ id: entry.id, valid: r.valid, error_type: r.errorType })}\n`);
      }
    });
  bfcl
    .command('exec')
    .description('JSON lines {"id","category","turns"} on stdin → {"id","turns":[{"results":[...]}]} per line (each call\'s result text)')
    .option('--data <dir>', 'folder with the BFCL data (entries, possible_answer/, func_doc/, long_context.json)', DEFAULT_BFCL_DIR)
    .action(async (opts: { data: string }) => {
      const jobs = await readJobs(opts.data);
      const o = options(opts.data);
      for (const { entry, turns } of jobs) {
        const results = executeAttempt(
          entry,
          turns.map((calls) => [calls]),
          o,
        );
        process.stdout.write(`${JSON.stringify({ id: entry.id, turns: results.map((r) => ({ results: r })) })}\n`);
      }
    });
}
