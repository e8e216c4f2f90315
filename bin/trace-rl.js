#!/usr/bin/env node
// Entry point of the `trace-rl` command. Node 20 cannot strip TypeScript types, so the sources run
// through tsx's loader; there is no separate build step to forget.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
