/**
 * Seeded generator of the world: entities with relations and attributes, then one templated passage
 * per entity stating several facts, including facts about neighbours (distractors: a city's passage
 * lists people born there with their birth years, a film's passage names its director's other film…).
 */
import { createRng, type Rng } from '../../util/rng.ts';
import { FILM_WORDS, cityName, companyName, filmName, personName, universityName, unique, word } from './names.ts';
import type { Entity, EntityKind, World, WorldPassage } from './types.ts';

export interface WorldSize {
  countries: number;
  cities: number;
  universities: number;
  people: number;
  companies: number;
  films: number;
}

export const DEFAULT_WORLD_SIZE: WorldSize = { countries: 8, cities: 24, universities: 10, people: 70, companies: 18, films: 50 };

const CONTINENTS = ['Europe', 'Asia', 'Africa', 'Oceania', 'South America', 'North America'];
const OCCUPATIONS = ['painter', 'novelist', 'architect', 'composer', 'physicist', 'diplomat', 'actor', 'engineer'];

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;
const year = (rng: Rng, lo: number, hi: number) => String(lo + rng.int(hi - lo + 1));

export function generateWorld(seed: number, size: WorldSize = DEFAULT_WORLD_SIZE): World {
  const rng = createRng(seed).fork('world');
  const used = new Set<string>();
  const entities: Entity[] = [];
  const add = (kind: EntityKind, name: string, e: Partial<Entity> = {}): Entity => {
    const ent: Entity = { id: `${kind}-${entities.filter((x) => x.kind === kind).length}`, kind, name, attrs: {}, rels: {}, lookalikes: [], ...e };
    entities.push(ent);
    return ent;
  };
  const countries = Array.from({ length: size.countries }, () =>
    add(
      'country',
      unique(rng, used, () => word(rng, 2, 3) + pick(rng, ['ia', 'land', 'stan', 'or'])),
      { attrs: { continent: pick(rng, CONTINENTS) } },
    ),
  );
  const cities: Entity[] = [];
  for (let i = 0; i < size.cities; i++) {
    const name = cityName(
      rng,
      used,
      cities.map((c) => c.name),
    );
    cities.push(
      add('city', name, { attrs: { founded: year(rng, 900, 1900) }, rels: { country: (i < countries.length ? countries[i]! : pick(rng, countries)).id } }),
    );
  }
  const universities = Array.from({ length: size.universities }, () => {
    const city = pick(rng, cities);
    return add('university', universityName(rng, used, city.name), { attrs: { founded: year(rng, 1100, 1990) }, rels: { campusCity: city.id } });
  });
  const surnames: string[] = [];
  const people = Array.from({ length: size.people }, () =>
    add('person', personName(rng, used, surnames), {
      attrs: { born: year(rng, 1900, 1995), occupation: pick(rng, OCCUPATIONS) },
      rels: { birthplace: pick(rng, cities).id, almaMater: pick(rng, universities).id },
    }),
  );
  const companies: Entity[] = [];
  for (let i = 0; i < size.companies; i++) {
    const name = companyName(
      rng,
      used,
      companies.map((c) => c.name),
    );
    companies.push(
      add('company', name, { attrs: { founded: year(rng, 1890, 2015) }, rels: { founder: pick(rng, people).id, headquarters: pick(rng, cities).id } }),
    );
  }
  const films: Entity[] = [];
  for (let i = 0; i < size.films; i++) {
    const name = filmName(
      rng,
      used,
      films.map((f) => f.name),
    );
    films.push(add('film', name, { attrs: { released: year(rng, 1950, 2024) }, rels: { director: pick(rng, people).id, studio: pick(rng, companies).id } }));
  }
  const byId = new Map(entities.map((e) => [e.id, e]));
  const byName = new Map(entities.map((e) => [e.name, e]));
  markLookalikes(entities);
  const passages = entities.map((e) => writePassage(e, entities, byId, rng.fork(`passage:${e.id}`)));
  return { seed, entities, passages, byId, byName };
}

/** Two names look alike when they share a distinctive token (not "New", "University", "of", …). */
function markLookalikes(entities: Entity[]): void {
  const generic = new Set([
    'new',
    'falls',
    'university',
    'of',
    'the',
    'institute',
    'college',
    'academy',
    'pictures',
    'studios',
    'media',
    'films',
    'ii',
    ...FILM_WORDS,
  ]);
  const byToken = new Map<string, Entity[]>();
  for (const e of entities) {
    for (const t of new Set(
      e.name
        .toLowerCase()
        .split(' ')
        .filter((t) => !generic.has(t)),
    )) {
      const list = byToken.get(t) ?? [];
      list.push(e);
      byToken.set(t, list);
    }
  }
  for (const e of entities) {
    const like = new Set<string>();
    for (const t of e.name.toLowerCase().split(' ')) for (const o of byToken.get(t) ?? []) if (o !== e) like.add(o.name);
    e.lookalikes = [...like].sort();
  }
}

function writePassage(e: Entity, all: readonly Entity[], byId: Map<string, Entity>, rng: Rng): WorldPassage {
  const rel = (r: keyof Entity['rels']) => byId.get(e.rels[r]!)!;
  const mentions: string[] = [];
  const values: string[] = [];
  const m = (x: Entity) => (mentions.push(x.name), x.name);
  const v = (s: string) => (values.push(s), s);
  const s: string[] = [];
  switch (e.kind) {
    case 'country': {
      const cs = all.filter((c) => c.kind === 'city' && c.rels.country === e.id);
      s.push(`${e.name} is a country in ${v(e.attrs.continent!)}.`);
      if (cs.length > 0) s.push(`Its cities include ${cs.slice(0, 4).map(m).join(', ')}.`);
      break;
    }
    case 'city': {
      const born = all.filter((p) => p.kind === 'person' && p.rels.birthplace === e.id).slice(0, 2);
      s.push(`${e.name} is a city in ${m(rel('country'))}, founded in ${v(e.attrs.founded!)}.`);
      for (const p of born) s.push(`The ${p.attrs.occupation} ${m(p)}, born in ${v(p.attrs.born!)}, grew up in ${e.name}.`);
      break;
    }
    case 'university': {
      s.push(`${e.name} is a university in ${m(rel('campusCity'))}. It was founded in ${v(e.attrs.founded!)}.`);
      const alum = all.find((p) => p.kind === 'person' && p.rels.almaMater === e.id);
      if (alum) s.push(`Its alumni include ${m(alum)}.`);
      break;
    }
    case 'person': {
      const films = all.filter((f) => f.kind === 'film' && f.rels.director === e.id).slice(0, 3);
      const founded = all.filter((c) => c.kind === 'company' && c.rels.founder === e.id).slice(0, 2);
      s.push(`${e.name} (born ${v(e.attrs.born!)}) is a ${v(e.attrs.occupation!)} from ${m(rel('birthplace'))}.`);
      s.push(`${e.name.split(' ')[0]} studied at ${m(rel('almaMater'))}.`);
      if (films.length > 0) s.push(`${e.name} directed ${films.map(m).join(' and ')}.`);
      if (founded.length > 0) s.push(`${e.name} founded ${founded.map(m).join(' and ')}.`);
      const peer = pick(
        rng,
        all.filter((p) => p.kind === 'person' && p !== e),
      );
      s.push(`A frequent collaborator, ${m(peer)}, was born in ${v(peer.attrs.born!)}.`);
      break;
    }
    case 'company': {
      const films = all.filter((f) => f.kind === 'film' && f.rels.studio === e.id).slice(0, 3);
      s.push(`${e.name} is a film company founded in ${v(e.attrs.founded!)} by ${m(rel('founder'))}.`);
      s.push(`It is headquartered in ${m(rel('headquarters'))}.`);
      if (films.length > 0) s.push(`Its productions include ${films.map(m).join(', ')}.`);
      break;
    }
    case 'film': {
      const director = rel('director');
      s.push(`${e.name} is a film released in ${v(e.attrs.released!)}.`);
      s.push(`It was directed by ${m(director)} and produced by ${m(rel('studio'))}.`);
      const other = all.find((f) => f.kind === 'film' && f !== e && f.rels.director === director.id);
      if (other) s.push(`${director.name} also directed ${m(other)}, released in ${v(other.attrs.released!)}.`);
      break;
    }
  }
  return { id: `p-${e.id}`, title: e.name, text: s.join(' '), entityId: e.id, mentions: [...new Set(mentions)], values: [...new Set(values)] };
}
