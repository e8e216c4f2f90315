/**
 * A family: implementations of one interface picked by name at configuration time (strategies,
 * estimators, environment kinds, policy kinds). Every registry is built here so that each one is
 * read, extended and queried the same way, and an unknown name always fails with the family's name
 * and the names it knows.
 */
import { z } from 'zod';

/** What every entry of a family has: the name a configuration uses. */
export interface FamilyEntry {
  readonly name: string;
}

export interface Family<E extends FamilyEntry> {
  /** What the entries are, in messages (e.g. "environment kind"). */
  readonly family: string;
  /** Adds an entry; its name must be new (a plugin cannot silently replace a built-in entry). */
  register(entry: E): void;
  /** The entry of `name`; a name the family does not know fails, naming the names it does. */
  get(name: string): E;
  has(name: string): boolean;
  names(): string[];
  entries(): E[];
}

/** Raised for a name a family does not know. */
export class UnknownNameError extends RangeError {
  override name = 'UnknownNameError';
  constructor(
    readonly family: string,
    readonly requested: string,
    readonly known: readonly string[],
  ) {
    super(`no ${family} ${requested} (known: ${known.join(', ')})`);
  }
}

export function defineFamily<E extends FamilyEntry>(family: string, builtIn: readonly E[] = []): Family<E> {
  const entries = new Map<string, E>();
  const self: Family<E> = {
    family,
    register(entry) {
      if (entries.has(entry.name)) throw new RangeError(`${family} ${entry.name} exists already`);
      entries.set(entry.name, entry);
    },
    get(name) {
      const entry = entries.get(name);
      if (!entry) throw new UnknownNameError(family, name, self.names());
      return entry;
    },
    has: (name) => entries.has(name),
    names: () => [...entries.keys()],
    entries: () => [...entries.values()],
  };
  for (const entry of builtIn) self.register(entry);
  return self;
}

/**
 * The settings of every entry of a family, discriminated by `key`; a name the family does not know
 * fails with the names it does. Built when first used (zod keeps a lazy schema once built), so a
 * plugin registers its entries before the first configuration is parsed.
 */
export function discriminatedSchema<E extends FamilyEntry & { schema: z.ZodType }>(family: Family<E>, key: string): z.ZodType {
  return z.lazy(() => {
    const all = family.entries();
    const names = all.map((e) => JSON.stringify(e.name)).join('|');
    const schemas = all.map((e) => e.schema) as unknown as [z.ZodObject, ...z.ZodObject[]];
    return z.discriminatedUnion(key, schemas, { error: (issue) => (issue.code === 'invalid_union' ? `Invalid option: expected one of ${names}` : undefined) });
  });
}
