/**
 * Reading settings stored by an older version: a run folder keeps its configuration as it was parsed
 * then, and before environments and policies had a schema per kind it held every kind's fields. The
 * fields today's schema of that kind does not take are dropped (in a user's config they are errors).
 */
import type { z } from 'zod';

/** `value` with only the keys `schema` (an object, possibly wrapped in defaults or refinements) has, recursively. */
export function knownFields(schema: z.ZodType, value: unknown): unknown {
  const shape = objectShape(schema);
  if (!shape || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k in shape)
      .map(([k, v]) => [k, knownFields(shape[k]!, v)]),
  );
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = (schema as unknown as { _zod: { def: { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType } } })._zod.def;
  if (def.type === 'object') return def.shape;
  const inner = def.innerType ?? def.in;
  return inner ? objectShape(inner) : undefined;
}

/** True when `schema` (an object, possibly nested) has the dotted field `path`, e.g. `math.noise`. */
export function hasField(schema: z.ZodType, path: string): boolean {
  let at: z.ZodType | undefined = schema;
  for (const key of path.split('.')) {
    const shape: Record<string, z.ZodType> | undefined = at ? objectShape(at) : undefined;
    if (!shape || !(key in shape)) return false;
    at = shape[key];
  }
  return true;
}
