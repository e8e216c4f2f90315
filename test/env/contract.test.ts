/** Every environment passes the shared contract (test/contracts/environment.ts) on real prompts. */
import { corpusTool, exampleToPrompt, loadDataset, SearchEnv, Simulator, WorldEnv } from '../../src/env/index.ts';
import { ScriptedWorldPolicy, SimulatorPolicy } from '../../src/policy/index.ts';
import { environmentContract } from '../contracts/environment.ts';
import { RandomSearchR1Policy } from '../contracts/episode.ts';

const world = new WorldEnv({ seed: 5, questions: 300 });
environmentContract('world', {
  make: () => new WorldEnv({ seed: 5, questions: 300 }),
  prompts: world.test.slice(0, 6),
  policy: new ScriptedWorldPolicy(world, { noise: 0.5 }),
});

const simulator = new Simulator({ seed: 9 });
environmentContract('simulator', {
  make: () => new Simulator({ seed: 9 }),
  prompts: simulator.prompts(8),
  policy: new SimulatorPolicy(simulator),
});

// SearchEnv on real HotpotQA questions, each searching its own ten paragraphs with BM25.
const { examples } = loadDataset('hotpotqa', { limit: 6 });
let calls = 0;
const tool = corpusTool('per-question', examples);
environmentContract('search (hotpotqa, per-question BM25)', {
  make: () => new SearchEnv({ tool: { name: tool.name, search: (q, o) => (calls++, tool.search(q, o)) }, topK: 2, maxTurns: 4 }),
  prompts: examples.map(exampleToPrompt),
  policy: new RandomSearchR1Policy(),
  toolCalls: () => calls,
});
