/** The embedded world served as `trace-rl env serve` serves it, for the session and fleet tests. */
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import type { EnvironmentSetup } from '../../../src/env/kind.ts';

/** A served world whose peak of open sessions is recorded. */
export function servedWorld(world: EnvironmentSetup, maxSessions: number) {
  const served = new ServedEnv(world, 'world', { maxSessions });
  let peak = 0;
  const open = served.open.bind(served);
  served.open = () => {
    const s = open();
    peak = Math.max(peak, served.openSessions);
    return s;
  };
  return { served, peak: () => peak };
}

/** `served` over OpenEnv's protocol on a real port (0: any free one). */
export const serveOpenEnv = (served: ServedEnv, port = 0) => serveEnvironment(served, 'openenv', { port, maxBodyBytes: 1 << 20 });

/**
 * The small run the served-world tests train (trace at the paper's preset, the embedded policy, no gold
 * predictor): what they compare — trees, costs, the server's counts — is the same run's, in process and
 * over the wire. Each test adds its engine, eval and env settings.
 */
export const SMALL_TRACE_RUN = {
  seed: 11,
  steps: 2,
  pool: 8,
  strategy: { name: 'trace', preset: 'paper', budget: 24, continuations: 2 },
  predictor: { useGold: false },
  policy: { kind: 'embedded', warmStart: 'none' },
};
