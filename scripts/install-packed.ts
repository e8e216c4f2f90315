/**
 * Packs this repository with `npm pack` (which builds dist/ through `prepare`) and installs the tarball
 * into a new, empty project, as a user would: used by the package test and the start-up bench.
 *
 * Install scripts are skipped: the only one that matters is better-sqlite3's native compile (~2 min on
 * 2 cores); what the test and the bench run (`--version`, `solve`, `score`, importing the library)
 * never opens a run store, so it also proves those paths do not load the native addon. Optional
 * dependencies are left out too: they are node-llama-cpp's prebuilt llama.cpp binaries (~680 MB, every
 * Linux variant; more than half the install's CPU), which those paths never load either.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The real package.json's folder: the tests may run compiled under .test-build/, where it is a link.
export const REPO = dirname(realpathSync(fileURLToPath(new URL('../package.json', import.meta.url))));

export interface PackedInstall {
  /** The consumer project (package.json with "type": "module", trace-rl in node_modules). */
  project: string;
  /** Its `node_modules/.bin/trace-rl`. */
  bin: string;
  tarball: string;
}

export function installPacked(): PackedInstall {
  const root = mkdtempSync(join(tmpdir(), 'trace-rl-pack-'));
  // Under scripts/test.sh dist/ is fresh and other tests' CLI children run it (TRACE_RL_RUN_DIST):
  // rebuilding it in place through `prepare` would hand them half-written files, so it is packed as built.
  const scripts = process.env.TRACE_RL_RUN_DIST === '1' ? ['--ignore-scripts'] : [];
  execFileSync('npm', ['pack', '--silent', ...scripts, '--pack-destination', root], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = join(
    root,
    readdirSync(root).find((f) => f.endsWith('.tgz'))!,
  );
  const project = join(root, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--prefer-offline', '--ignore-scripts', '--omit=optional', '--no-audit', '--no-fund', '--silent', tarball], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { project, bin: join(project, 'node_modules', '.bin', 'trace-rl'), tarball };
}
