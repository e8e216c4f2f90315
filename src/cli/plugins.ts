import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { usePlugin } from '../util/plugins.ts';
import { UserError } from '../util/user-error.ts';

/**
 * `--plugin <module>` (repeatable, anywhere on the command line): modules imported before the command
 * is built, so what they register (a strategy, an environment or policy kind) is known to the
 * configuration every command parses. Each family takes new entries only before the first
 * configuration is parsed, which is why plugins load here and not in a command.
 */
export function pluginArgs(argv: readonly string[]): { plugins: string[]; rest: string[] } {
  const plugins: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--plugin') {
      const path = argv[i + 1];
      if (path === undefined || path.startsWith('-')) throw new UserError('--plugin needs a module path (a .js file, or .ts from a source checkout)');
      plugins.push(path);
      i++;
    } else if (a.startsWith('--plugin=')) plugins.push(a.slice('--plugin='.length));
    else rest.push(a);
  }
  return { plugins, rest };
}

/** Imports each plugin module, relative to the working directory; a module that fails to load is a user error naming it. */
export async function loadPlugins(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    try {
      await usePlugin(pathToFileURL(resolve(path)).href);
    } catch (e) {
      const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
      throw new UserError(`--plugin ${path}: could not load it (${why})`);
    }
  }
}
