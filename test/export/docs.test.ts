import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { columnTable, TRL_COLUMNS, VERL_COLUMNS } from '../../src/export/index.ts';

test('docs/export.md shows exactly the columns and types the writer uses', () => {
  const page = readFileSync(new URL('../../docs/export.md', import.meta.url), 'utf8');
  assert.ok(page.includes(columnTable(VERL_COLUMNS)), 'verl table is current (regenerate it from VERL_COLUMNS with columnTable)');
  assert.ok(page.includes(columnTable(TRL_COLUMNS)), 'TRL table is current (regenerate it from TRL_COLUMNS with columnTable)');
});
