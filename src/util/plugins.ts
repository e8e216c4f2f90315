/**
 * The plugin modules this process loaded (`--plugin`), as file URLs in load order: a process that
 * rebuilds the run elsewhere (a split step's worker) imports them first, so what they registered
 * exists there too.
 */
const loaded: string[] = [];

/** Imports a plugin module (a file URL) and remembers it. */
export async function usePlugin(url: string): Promise<void> {
  await import(url);
  if (!loaded.includes(url)) loaded.push(url);
}

export function loadedPlugins(): readonly string[] {
  return loaded;
}
