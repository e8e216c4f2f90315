// The development rounds' folders live in one archive (docs/experiments/README.md): every such path a
// document names must be in it (or back on disk), and the archive must unpack only under bench/compare/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const ARCHIVE = 'bench/compare/archive/dev-rounds.tar.gz';
const entries = () => execFileSync('tar', ['-tzf', ARCHIVE], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');

test('the archive holds only files under bench/compare/out-dev*/ and bench/compare/plots/dev-*/', () => {
  const names = entries();
  assert.ok(names.length > 100, `${names.length} entries`);
  const outside = names.filter((n) => !/^bench\/compare\/(out-dev[\w-]*|plots\/dev-[\w-]+)\/[^]*$/.test(n) || n.split('/').includes('..'));
  assert.deepEqual(outside, []);
});

test('every development-round path a markdown file names is in the archive or on disk', () => {
  const docs = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
  const inArchive = entries();
  const missing: string[] = [];
  for (const doc of docs) {
    // Backquoted or linked paths, written from the root (bench/compare/…) or after one (`out-dev-b24`).
    for (const [, path] of readFileSync(join(ROOT, doc), 'utf8').matchAll(/\b((?:bench\/compare\/)?(?:out-dev[\w*-]*|plots\/dev-[\w*-]+)(?:\/[\w.-]+)*)/g)) {
      const full = (path!.startsWith('bench/') ? path! : `bench/compare/${path}`).replace(/\/$/, '');
      if (full.includes('*')) continue;
      if (!existsSync(join(ROOT, full)) && !inArchive.some((e) => e === full || e.startsWith(`${full}/`))) missing.push(`${doc}: ${full}`);
    }
  }
  assert.deepEqual(missing, []);
});

// The finals' plots no document shows as an image live in a second archive (docs/experiments/README.md).
const PLOTS = 'bench/compare/archive/final-plots.tar.gz';
const plotEntries = () => execFileSync('tar', ['-tzf', PLOTS], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');

test('the plots archive holds only SVG plots under bench/compare/plots/, none of them also on disk', () => {
  const names = plotEntries();
  assert.ok(names.length > 10, `${names.length} entries`);
  assert.deepEqual(
    names.filter((n) => !/^bench\/compare\/plots\/[\w-]+\/[\w-]+\.svg$/.test(n)),
    [],
  );
  assert.deepEqual(
    names.filter((n) => existsSync(join(ROOT, n))),
    [],
  );
});

test('every path into a folder whose plots were archived, that a markdown file names, is on disk or in the archive', () => {
  const docs = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
  const archived = plotEntries();
  const folders = new Set(archived.map((e) => e.split('/')[3]));
  const missing: string[] = [];
  for (const doc of docs) {
    for (const [, folder, file] of readFileSync(join(ROOT, doc), 'utf8').matchAll(/\bbench\/compare\/plots\/([\w-]+)(\/[\w.-]+)?/g)) {
      if (!folders.has(folder!)) continue;
      const full = `bench/compare/plots/${folder}${file ?? ''}`;
      if (!existsSync(join(ROOT, full)) && !archived.some((e) => e === full || e.startsWith(`${full}/`))) missing.push(`${doc}: ${full}`);
    }
  }
  assert.deepEqual(missing, []);
});
