import { readFileSync } from 'node:fs';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { UsageError } from './io.ts';

/** Reads a YAML or JSON configuration file (JSON is YAML); errors name the file and line. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read config ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseYaml(text, { prettyErrors: true });
  } catch (e) {
    const err = e as Error & { linePos?: Array<{ line: number; col: number }> };
    const where = err.linePos?.[0] ? `:${err.linePos[0].line}:${err.linePos[0].col}` : '';
    throw new UsageError(`${file}${where}: not valid YAML/JSON: ${err.message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${file}: the configuration must be a mapping of settings, got ${Array.isArray(value) ? 'a list' : typeof value}`);
  return value as Record<string, unknown>;
}

export function configToYaml(config: unknown): string {
  return toYaml(config);
}

/** Sets `value` at a dotted path of a plain object, creating objects on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = target;
  for (const k of keys.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys[keys.length - 1]] = value;
}
