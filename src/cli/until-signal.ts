/** How long a stopping server may take to drop its connections before the command returns anyway. */
const GRACE_MS = 2000;

/**
 * Runs a server until SIGINT or SIGTERM, then closes it (every open connection is dropped, so
 * in-flight work is abandoned) and returns; a second signal while stopping exits at once. Every
 * trace-rl server command ends this way.
 */
export async function serveUntilSignal(server: { close(): Promise<void> }, label: string): Promise<void> {
  const now = () => process.exit(130);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      process.once('SIGINT', now);
      process.once('SIGTERM', now);
      process.stderr.write(`${label}: ${signal}, stopping\n`);
      const timer = setTimeout(resolve, GRACE_MS);
      timer.unref();
      void server.close().finally(() => {
        clearTimeout(timer);
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.removeListener('SIGINT', now);
  process.removeListener('SIGTERM', now);
}

/**
 * Ctrl-C for a long command: the first SIGINT prints `stopping` (what is kept and what to do) and
 * aborts the returned signal, so the work ends at its next safe point; a second exits at once (130).
 * `done()` removes the handler. train, eval, diagnose and rollout stop this way, and exit 130 after the clean stop.
 */
export function interruptible(stopping: string): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`\nstopping: ${stopping}\n`);
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, done: () => void process.off('SIGINT', onSigint) };
}
