import { InputFileError, readTextFile } from '../util/bounded-read.ts';
import { parseDocument, stringify as toYaml } from 'yaml';
import { UsageError } from './io.ts';

/** A configuration is a page of settings; anything larger is not one. */
const CONFIG_MAX_BYTES = 16 * 1024 * 1024;

/** Reads a YAML or JSON configuration file (JSON is YAML); errors name the file and line. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readTextFile(file, { maxFileBytes: CONFIG_MAX_BYTES });
  } catch (e) {
    if (e instanceof InputFileError) throw new UsageError(`cannot read config ${e.message}`);
    throw e;
  }
  // Warnings (unknown directives, odd tags) are rejected like errors: the yaml library would otherwise
  // print them as multi-line process warnings, and a config it is unsure about should not start a run.
  const doc = parseDocument(text, { prettyErrors: true, logLevel: 'silent' });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const where = problem.linePos?.[0] ? `:${problem.linePos[0].line}:${problem.linePos[0].col}` : '';
    throw new UsageError(`${file}${where}: not valid YAML/JSON: ${problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (e) {
    throw new UsageError(`${file}: not valid YAML/JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${file}: the configuration must be a mapping of settings, got ${Array.isArray(value) ? 'a list' : typeof value}`);
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

/**
 * Applies `--set path=value` pairs to a raw configuration, in order (a later pair wins). A value that
 * parses as JSON is taken as JSON (numbers, booleans, lists, objects); anything else stays a string,
 * so `--set env.successRule=em` needs no quotes. The schema checks the result, not this.
 */
export function applySetPairs(raw: Record<string, unknown>, pairs: readonly string[], example: string): void {
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set ${pair}: expected path=value, e.g. --set ${example}`);
    const text = pair.slice(eq + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // not JSON: keep the string
    }
    setPath(raw, pair.slice(0, eq), value);
  }
}
