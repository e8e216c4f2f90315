/**
 * Writes the tiny LM of test/tinylm/fixtures.ts (a random-weight llama over the fixture world's
 * vocabulary, seed 1) as a GGUF: the model scripts/tinker-sdk-run.sh serves to the official SDK, and
 * the SDK replay test serves too, so the recorded answers can be checked against a live server.
 *
 *   node --import tsx scripts/tinker-fixture-model.ts OUT.gguf
 */
import { writeFileSync } from 'node:fs';
import { modelToGguf } from '../src/tinylm/index.ts';
import { fixture } from '../test/tinylm/fixtures.ts';

const out = process.argv[2];
if (!out) throw new Error('usage: tinker-fixture-model.ts OUT.gguf');
writeFileSync(out, modelToGguf(fixture().model));
