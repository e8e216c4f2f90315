/**
 * Fictional names from syllables. Look-alikes are made on purpose (shared surnames, "New X" / "X Falls"
 * cities, "X Pictures" / "X Studios", universities named after cities, film sequels) because similar
 * names are what make retrieval and reading hard in real multi-hop QA.
 */
import type { Rng } from '../../util/rng.ts';

const SYL = [
  'ka',
  'lo',
  'mer',
  'vin',
  'dra',
  'sel',
  'tor',
  'an',
  'bel',
  'rin',
  'os',
  'ta',
  'vel',
  'mor',
  'ish',
  'den',
  'cor',
  'ul',
  'fen',
  'gar',
  'is',
  'lum',
  'par',
  'zen',
  'qui',
  'har',
  'ost',
  'wyn',
];
const ADJ = ['Silent', 'Crimson', 'Hollow', 'Distant', 'Golden', 'Broken', 'Quiet', 'Burning', 'Last', 'Northern', 'Paper', 'Iron', 'Velvet', 'Winter'];
const NOUN = ['Harbor', 'Garden', 'Signal', 'Mirror', 'River', 'Tower', 'Orchard', 'Letter', 'Horizon', 'Lantern', 'Bridge', 'Circus', 'Meadow', 'Compass'];

/** Common film-title words; shared ones do not make two titles look alike (a shared rare word does). */
export const FILM_WORDS = [...ADJ, ...NOUN].map((w) => w.toLowerCase());

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function word(rng: Rng, min = 2, max = 3): string {
  const n = min + rng.int(max - min + 1);
  let w = '';
  for (let i = 0; i < n; i++) w += SYL[rng.int(SYL.length)];
  return cap(w);
}

/** Draws names until one is new; the `used` set keeps names unique across the world. */
export function unique(rng: Rng, used: Set<string>, make: () => string): string {
  for (let i = 0; i < 1000; i++) {
    const n = make();
    if (!used.has(n)) {
      used.add(n);
      return n;
    }
  }
  throw new Error('name space exhausted; lower the world size');
}

export function cityName(rng: Rng, used: Set<string>, earlier: readonly string[]): string {
  // A third of cities echo an earlier city's name.
  if (earlier.length > 0 && rng.next() < 0.33) {
    const base = earlier[rng.int(earlier.length)]!.replace(/^New /, '').replace(/ Falls$/, '');
    const variant = rng.next() < 0.5 ? `New ${base}` : `${base} Falls`;
    if (!used.has(variant)) return unique(rng, used, () => variant);
  }
  return unique(rng, used, () => word(rng));
}

export function personName(rng: Rng, used: Set<string>, surnames: string[]): string {
  return unique(rng, used, () => {
    // Surnames are reused so that several people share one (look-alikes).
    const last = surnames.length > 0 && rng.next() < 0.3 ? surnames[rng.int(surnames.length)]! : word(rng, 2, 3);
    if (!surnames.includes(last)) surnames.push(last);
    return `${word(rng, 2, 2)} ${last}`;
  });
}

export function filmName(rng: Rng, used: Set<string>, earlier: readonly string[]): string {
  if (earlier.length > 0 && rng.next() < 0.2) {
    const base = earlier[rng.int(earlier.length)]!;
    if (!/ II$/.test(base) && !used.has(`${base} II`)) return unique(rng, used, () => `${base} II`);
  }
  return unique(rng, used, () => {
    const u = rng.next();
    if (u < 0.4) return `The ${NOUN[rng.int(NOUN.length)]} of ${word(rng)}`;
    if (u < 0.7) return `${word(rng)} ${NOUN[rng.int(NOUN.length)]}`;
    return `${ADJ[rng.int(ADJ.length)]} ${NOUN[rng.int(NOUN.length)]}`;
  });
}

export function companyName(rng: Rng, used: Set<string>, earlier: readonly string[]): string {
  if (earlier.length > 0 && rng.next() < 0.3) {
    const base = earlier[rng.int(earlier.length)]!.split(' ')[0]!;
    const v = `${base} ${['Studios', 'Pictures', 'Media'][rng.int(3)]}`;
    if (!used.has(v)) return unique(rng, used, () => v);
  }
  return unique(rng, used, () => `${word(rng)} ${['Pictures', 'Studios', 'Media', 'Films'][rng.int(4)]}`);
}

export function universityName(rng: Rng, used: Set<string>, city: string): string {
  return unique(rng, used, () => (rng.next() < 0.5 ? `University of ${city}` : `${city} ${['Institute', 'College', 'Academy'][rng.int(3)]}`));
}
