import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout's root folder. npm test runs the tests compiled under .test-build/ (scripts/build-tests.sh),
 * where the checkout's other files are links: the real package.json's folder is the checkout either way,
 * which is what git, npm and a scan of the sources need.
 */
export const CHECKOUT = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));

/**
 * The module `name` (no extension) in the folder of `url`, as this process loads modules: the compiled
 * JavaScript under .test-build/, the TypeScript when the tests run through tsx. For modules a test hands
 * to another process it starts with the same loader (a split step's workers, the CLI's --plugin).
 */
export function moduleBeside(url: string, name: string): URL {
  return new URL(`${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, url);
}
