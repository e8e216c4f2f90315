/** Builds `count` fresh instances, runs `fn` on them, and disposes of every one even when `fn` fails. */
export async function withInstances<T>(
  count: number,
  make: () => T | Promise<T>,
  dispose: ((x: T) => Promise<void> | void) | undefined,
  fn: (xs: T[]) => Promise<void>,
): Promise<void> {
  const xs: T[] = [];
  try {
    for (let i = 0; i < count; i++) xs.push(await make());
    await fn(xs);
  } finally {
    for (const x of xs) await dispose?.(x);
  }
}
