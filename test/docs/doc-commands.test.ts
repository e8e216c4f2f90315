// Every `trace-rl …` command that README.md and docs/ show a reader, in code blocks and inline code,
// names a subcommand and flags the CLI has (checked against the commander program src/cli builds, so a
// renamed or removed flag fails here). docs/experiments/ is left out: it is history, kept verbatim,
// with the commands as they were run then.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';

const ROOT = join(import.meta.dirname, '../..');

interface DocCommand {
  where: string;
  /** The words after `trace-rl`, up to the first shell operator. */
  words: string[];
  /** The whole shell line (with what pipes into it). */
  line: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'experiments' ? [] : markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** Splits at shell operators (`|` only with spaces around it: `std|none` is one word of a usage line). */
function wordsAfterTraceRl(text: string): string[] {
  const at = text.search(/(^|[\s(])trace-rl\s/);
  const rest = text.slice(at).replace(/^[\s(]*trace-rl\s+/, '');
  const cut = rest.split(/\s(?:\|\||\||&&|;|<|>|2>|#)\s|\s#|`/)[0]!;
  return cut.split(/\s+/).filter(Boolean);
}

/** Commands in fenced code (backslash continuations joined) and in inline code spans. */
function docCommands(): DocCommand[] {
  const found: DocCommand[] = [];
  for (const file of ['README.md'].map((f) => join(ROOT, f)).concat(markdownFiles(join(ROOT, 'docs')))) {
    const where = relative(ROOT, file);
    const lines = readFileSync(file, 'utf8').split('\n');
    let fenced = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        continue;
      }
      if (fenced) {
        let full = line;
        while (full.endsWith('\\') && i + 1 < lines.length) full = full.slice(0, -1) + ' ' + lines[++i]!.trim();
        // A command line: trace-rl at its start (after npx, nice, env settings) or after a pipe.
        if (/^\s*(\$ )?([A-Z_]+=\S+ )*(nice (-n \d+ )?)?(npx )?trace-rl\s|\|\s*(npx )?trace-rl\s/.test(full)) {
          found.push({ where: `${where}:${i + 1}`, words: wordsAfterTraceRl(full), line: full.trim() });
        }
      } else {
        for (const [, raw] of line.matchAll(/`([^`]*\btrace-rl [a-z][^`]*)`/g)) {
          // In a table cell a pipe is written \|; a span like "trace-rl train: unknown option" quotes a message.
          const span = raw!.replace(/\\\|/g, '|');
          if (/\btrace-rl [\w-]+:/.test(span)) continue;
          found.push({ where: `${where}:${i + 1}`, words: wordsAfterTraceRl(span), line: span });
        }
      }
    }
  }
  return found;
}

/** The subcommand a command's words name, and the flags it passes that the subcommand lacks. */
function check(program: Command, words: string[]): string[] {
  let cmd = program;
  let i = 0;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (w.startsWith('-') || w.startsWith('[')) break;
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    // `solve roots|prefixes|knapsack`: a usage line naming alternatives, each must exist.
    const alternatives = w.split('|');
    if (!sub && alternatives.length > 1 && alternatives.every((a) => cmd.commands.some((c) => c.name() === a))) {
      cmd = cmd.commands.find((c) => c.name() === alternatives[0])!;
      continue;
    }
    if (!sub) {
      if (cmd === program) return [`no command "${w}"`];
      break; // an argument (a run folder, a file)
    }
    cmd = sub;
  }
  if (cmd === program) return words.length && !/^(--help|-h|--version|-V)$/.test(words[0]!) ? [`no command in "${words.join(' ')}"`] : [];
  // --plugin is taken by every command before the program is built (src/cli/plugins.ts).
  const known = new Set(['--help', '-h', '--plugin']);
  for (const o of cmd.options) {
    if (o.long) known.add(o.long);
    if (o.short) known.add(o.short);
    // commander's --no-x negates --x; a documented --no-x is as valid as --x.
    if (o.long?.startsWith('--no-')) known.add('--' + o.long.slice(5));
  }
  const problems: string[] = [];
  for (const w of words.slice(i)) {
    const flag = /^\[?(--?[A-Za-z][\w-]*)/.exec(w)?.[1];
    if (flag && !known.has(flag)) problems.push(`"${cmd.name()}" has no flag ${flag}`);
  }
  return problems;
}

test('every trace-rl command in README.md and docs/ names a subcommand and flags the CLI has', async () => {
  const program = await buildProgram(['node', 'trace-rl']);
  const commands = docCommands();
  assert.ok(commands.length > 40, `found only ${commands.length} commands: is the extraction broken?`);
  const problems = commands.flatMap((c) => check(program, c.words).map((p) => `${c.where}: ${p} (in: ${c.line})`));
  assert.deepEqual(problems, []);
});

test('the check catches a flag that does not exist', async () => {
  const program = await buildProgram(['node', 'trace-rl']);
  assert.deepEqual(check(program, ['compare', '--seeds', '2', '--no-such-flag']), ['"compare" has no flag --no-such-flag']);
  assert.deepEqual(check(program, ['nonsense']), ['no command "nonsense"']);
  assert.deepEqual(check(program, ['compare', '--seeds', '2']), []);
});

// Every subcommand's help is rendered in process (a spawn per subcommand would cost a second or more
// each on a shared machine). The shell blocks' commands themselves run in test/docs/run-*.test.ts
// (test/docs/shell-commands.yaml).
test('every documented subcommand renders its help', async () => {
  const program = await buildProgram(['node', 'trace-rl']);
  const subcommands = new Set(
    docCommands()
      .map((c) => c.words[0]!)
      .filter((w) => /^[a-z][a-z-]*$/.test(w)),
  );
  for (const name of subcommands) {
    const cmd = program.commands.find((c) => c.name() === name)!;
    assert.match(cmd.helpInformation(), /^Usage: /, name);
  }
});
