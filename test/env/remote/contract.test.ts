/**
 * The server kinds pass the environment contract in its session mode (test/contracts/environment.ts):
 * the project's world, served over each protocol by `trace-rl env serve`'s code on a real port, and
 * reached through `env.kind: openenv` (a WebSocket session per trajectory) and `env.kind: agentgym`
 * (HTTP) exactly as a run reaches it.
 */
import { after } from 'node:test';
import { envKinds } from '../../../src/env/registry.ts';
import type { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import type { Environment } from '../../../src/env/types.ts';
import { environmentContract } from '../../contracts/environment.ts';
import { RandomSearchR1Policy } from '../../contracts/episode.ts';

const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 60 }), { maxTurns: 4 });

for (const [protocol, text] of [
  ['openenv', 'action'],
  ['agentgym', 'turn'],
] as const) {
  const server = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 8 }), protocol, { port: 0, maxBodyBytes: 1 << 20 });
  after(() => server.close());
  const settings = envKinds
    .get(protocol)
    .schema.parse({ kind: protocol, url: server.url, tasks: [0, 1, 2, 3], successThreshold: 0.3, questionAfter: 'Question: ', action: { text } });
  const make = async () => (await envKinds.get(protocol).build(settings, { maxTurns: 4 })).env;
  const prompts = (await envKinds.get(protocol).build(settings, { maxTurns: 4 })).train;
  environmentContract(`${protocol} (the world served over the wire, action text ${text})`, {
    make,
    prompts,
    policy: new RandomSearchR1Policy(),
    episodes: 2,
    states: 'sessions',
    openSessions: (env: Environment<unknown>) => (env as unknown as RemoteEnv).openSessions,
  });
}
