// Relative links in the project's markdown (README, BENCHMARKS, ARCHITECTURE, docs/**) point at files
// that exist: the documents moved into docs/experiments/ (issue 35) and the repository lost superseded
// reports, so a dangling link is the likely way for either to go wrong.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');

function markdown(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdown(path) : name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces become -. */
function anchors(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/^#+ (.*)$/gm)].map(([, h]) =>
      h!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_\- ]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

test('every relative markdown link resolves to a file in the repository, and every #anchor to a heading of its file', () => {
  const files = ['README.md', 'BENCHMARKS.md', 'ARCHITECTURE.md'].map((f) => join(ROOT, f)).concat(markdown(join(ROOT, 'docs')));
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target!)) continue;
      if (target!.startsWith('#')) {
        if (!anchors(text).has(target!.slice(1))) broken.push(`${relative(ROOT, file)} → ${target} (no such heading)`);
        continue;
      }
      const path = decodeURIComponent(target!.split('#')[0]!);
      if (!existsSync(join(dirname(file), path))) broken.push(`${relative(ROOT, file)} → ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('docs/experiments/README.md lists every experiment file', () => {
  const dir = join(ROOT, 'docs/experiments');
  const index = readFileSync(join(dir, 'README.md'), 'utf8');
  const unlisted = readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md' && !index.includes(`](${f})`));
  assert.deepEqual(unlisted, [], 'add each new study to the list in docs/experiments/README.md');
});
