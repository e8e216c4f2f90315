// Every command a shell block of README.md or docs/*.md shows is run by a test or listed, with the
// reason, as not run here (test/docs/shell-commands.yaml), so a new documented command cannot slip by
// untested. The run-*.test.ts files run them.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { blockCommands, docCommands, docFiles, fencedBlocks, keyOf, manifest, MANIFEST, ROOT } from './shell-commands.ts';

test('every fenced block in README.md and docs/*.md names its language (a shell block cannot pass as plain text)', () => {
  const unnamed = docFiles().flatMap((f) =>
    fencedBlocks(f)
      .filter((b) => b.language === '')
      .map((b) => `${b.file}:${b.line}`),
  );
  assert.deepEqual(unnamed, [], 'name the language after the fence: sh for commands, text for output or a synopsis');
});

test(`every documented shell command is run by a test or listed as not run, and ${MANIFEST} lists nothing else`, () => {
  const commands = docCommands();
  assert.ok(commands.length > 80, `found only ${commands.length} commands: is the extraction broken?`);
  const entries = manifest();
  const listed = new Set(entries.map(keyOf));
  const documented = new Set(commands.map(keyOf));
  const neither = commands.filter((c) => !listed.has(keyOf(c))).map((c) => `${c.file}:${c.line}: ${c.text}`);
  assert.deepEqual(neither, [], `run each in a test/docs/run-*.test.ts, or list it with the reason it cannot run here, in ${MANIFEST}`);
  const stale = entries.filter((e) => !documented.has(keyOf(e))).map(keyOf);
  assert.deepEqual(stale, [], 'entries that match no documented command (the doc changed: update the entry and its test)');
  const twice = [...listed].filter((k) => entries.filter((e) => keyOf(e) === k).length > 1);
  assert.deepEqual(twice, []);
  for (const e of entries) if ('test' in e) assert.ok(existsSync(join(ROOT, e.test)), `${keyOf(e)}: ${e.test} does not exist`);
});

test('the extraction: continuations joined, comments cut outside quotes only, console output skipped, a fence left open refused', () => {
  const [sh, console] = fencedBlocks(
    'x.md',
    [
      'text',
      '```sh',
      '# a comment line',
      'echo \'# not a comment\' | npx trace-rl score   # {"em":1}',
      'npx trace-rl train --a 1 \\',
      '  --b "x # y" \\',
      '  --c 3   # the end',
      '',
      '```',
      '~~~console',
      '$ trace-rl --version',
      '0.1.0',
      '~~~',
    ].join('\n'),
  );
  assert.equal(sh!.language, 'sh');
  assert.deepEqual(blockCommands(sh!), [
    { file: 'x.md', line: 4, text: "echo '# not a comment' | npx trace-rl score", comment: '{"em":1}' },
    { file: 'x.md', line: 5, text: 'npx trace-rl train --a 1 --b "x # y" --c 3', comment: 'the end' },
  ]);
  assert.deepEqual(blockCommands(console!), [{ file: 'x.md', line: 11, text: 'trace-rl --version', comment: '' }]);
  assert.throws(() => fencedBlocks('y.md', '```sh\nls\n'), /y\.md:1: a fenced block is never closed/);
});
