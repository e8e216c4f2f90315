/**
 * The shell commands the docs show a reader: every fenced block of README.md and docs/*.md, and in the
 * shell ones (bash, sh, shell, console) each command with its file and line. docs/experiments/ is left
 * out: those pages are records of what was run then, kept as they were, not instructions.
 *
 * Each command is either run by a test (test/docs/run-*.test.ts) or listed as not run here, with the
 * reason, in test/docs/shell-commands.yaml: the one list of every documented command and what becomes
 * of it. `npx tsx test/docs/shell-commands.ts` prints every command with its place and that fate.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { CHECKOUT } from '../helpers/checkout.ts';

export const ROOT = CHECKOUT;
export const MANIFEST = 'test/docs/shell-commands.yaml';
export const SHELL_LANGUAGES = new Set(['bash', 'sh', 'shell', 'console']);

export interface FencedBlock {
  file: string;
  /** Line of the opening fence (1-based). */
  line: number;
  /** The info string's first word ('' when the fence names none). */
  language: string;
  lines: string[];
}

export interface DocCommand {
  file: string;
  /** Line the command starts on (1-based). */
  line: number;
  /** The command as a shell runs it: continuation lines joined, a trailing comment and a `$ ` prompt removed. */
  text: string;
  /** Its trailing comment (the last one of its lines), without the `#`: some show the output, e.g. `# {"m":[4,2,0,3]}`. */
  comment: string;
}

/** README.md and the pages directly under docs/ (not docs/experiments/). */
export function docFiles(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => `docs/${e.name}`)
    .sort();
  return ['README.md', ...pages];
}

export function fencedBlocks(file: string, text = readFileSync(join(ROOT, file), 'utf8')): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: FencedBlock | undefined;
  let fence = '';
  text.split('\n').forEach((raw, i) => {
    const m = /^\s*(`{3,}|~{3,})\s*([^\s`]*)/.exec(raw);
    if (open === undefined) {
      if (m) {
        fence = m[1]!;
        open = { file, line: i + 1, language: m[2]!.toLowerCase(), lines: [] };
      }
    } else if (m && m[1]!.startsWith(fence) && m[2] === '') {
      blocks.push(open);
      open = undefined;
    } else open.lines.push(raw);
  });
  if (open) throw new Error(`${file}:${open.line}: a fenced block is never closed`);
  return blocks;
}

/** Where a line's comment starts (a `#` after white space, outside quotes), or its length. */
function commentStart(line: string): number {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return i;
  }
  return line.length;
}

/** The commands of a shell block: comment and blank lines skipped, a `\` continuation joined to its next line; in a console block only `$ ` lines (the rest is output). */
export function blockCommands(block: FencedBlock): DocCommand[] {
  const commands: DocCommand[] = [];
  const console = block.language === 'console';
  for (let i = 0; i < block.lines.length; i++) {
    let line = block.lines[i]!;
    const start = block.line + 1 + i;
    if (console) {
      if (!/^\s*\$ /.test(line)) continue;
      line = line.replace(/^\s*\$ /, '');
    }
    const commentOf = (l: string) => l.slice(commentStart(l) + 1).trim();
    let text = line.slice(0, commentStart(line)).trim();
    let comment = commentOf(line);
    while (text.endsWith('\\') && i + 1 < block.lines.length) {
      const next = block.lines[++i]!;
      text = text.slice(0, -1).trim() + ' ' + next.slice(0, commentStart(next)).trim();
      comment = commentOf(next) || comment;
    }
    text = text.replace(/\s+/g, ' ').trim();
    if (text) commands.push({ file: block.file, line: start, text, comment });
  }
  return commands;
}

export function docCommands(): DocCommand[] {
  return docFiles().flatMap((f) =>
    fencedBlocks(f)
      .filter((b) => SHELL_LANGUAGES.has(b.language))
      .flatMap(blockCommands),
  );
}

const entrySchema = z.union([
  z.object({ file: z.string(), command: z.string(), test: z.string().regex(/^test\/.+\.test\.ts$/) }).strict(),
  z.object({ file: z.string(), command: z.string(), notRun: z.string().min(20) }).strict(),
]);
export type ManifestEntry = z.infer<typeof entrySchema>;

/** test/docs/shell-commands.yaml: per documented command, the test that runs it or why none does. */
export function manifest(): ManifestEntry[] {
  return z.array(entrySchema).parse(parse(readFileSync(join(ROOT, MANIFEST), 'utf8')));
}

export const keyOf = (c: { file: string; command?: string; text?: string }) => `${c.file}: ${c.command ?? c.text}`;

if (import.meta.filename === process.argv[1]) {
  const fate = new Map(manifest().map((e) => [keyOf(e), 'test' in e ? `run by ${e.test}` : `not run: ${e.notRun}`]));
  for (const c of docCommands()) console.log(`${c.file}:${c.line}\t${c.text}\n\t-> ${fate.get(keyOf(c)) ?? 'NEITHER run nor listed'}`);
}
