import type { Command } from 'commander';
import { z } from 'zod';
import { gradeDetailed } from '../../env/math/grader.ts';
import { readStdinRows } from '../io.ts';

/**
 * `trace-rl grade math`: JSON lines `{"gold": "...", "answer": "..."}` on stdin, one line
 * `{"correct": true|false}` per input line on stdout, in order. `answer` is either a final answer or a
 * whole response (then its last `\boxed{}` is graded); `gold` may be a string, a number, or a list of
 * accepted answers. All lines are checked before anything is written: a bad line is one stderr message
 * naming its line number, exit 2, nothing on stdout. An answer the grader will not compare within its
 * limits (brackets nested too deep, a huge factorial, too long) is `{"correct": false, "error": why}`.
 */
const gold = z.union([z.string(), z.number()]).transform(String);
const row = z.object({ gold: z.union([gold, z.array(gold).min(1)]), answer: z.string() });

export function register(program: Command): void {
  const grade = program.command('grade').description('grade answers against gold answers, JSON lines in and out');
  grade
    .command('math')
    .description('math answers: last \\boxed{} (or the whole answer), normalised, equivalence by the Compute Engine; prints {"correct": true|false} per line')
    .action(async () => {
      const rows = await readStdinRows(row, '{"gold": string | number | string[], "answer": string}');
      const out = rows.map((r) => {
        const g = gradeDetailed(r.answer, typeof r.gold === 'string' ? [r.gold] : r.gold);
        return JSON.stringify(g.undecided === undefined ? { correct: g.correct } : { correct: g.correct, error: g.undecided });
      });
      if (out.length > 0) process.stdout.write(out.join('\n') + '\n');
    });
}
