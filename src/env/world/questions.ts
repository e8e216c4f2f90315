/**
 * Questions over the world with known gold answers and gold search paths.
 *  - bridge (1–4 hops): a relation chain from a named entity, phrased compositionally
 *    ("In which country was the director of X born?" = X → director → birthplace → country);
 *    hops = passages to read = relations followed (+1 when the last step reads an attribute).
 *  - comparison (2 hops): "Who was born earlier, A or B?"; yes-no (2 hops): "Are A and B in the same country?"
 *  - bridge-comparison (4 hops): "Whose director was born earlier, film A or film B?"
 * Question texts are unique; `splitQuestions` gives train/test sets that share none.
 */
import { createRng, shuffled, type Rng } from '../../util/rng.ts';
import type { Attribute, Entity, Relation, World, WorldQuestion } from './types.ts';
import type { WorldProfile } from './profile.ts';

const NP: Record<Relation, (np: string) => string> = {
  director: (np) => `the director of ${np}`,
  studio: (np) => `the studio that produced ${np}`,
  founder: (np) => `the founder of ${np}`,
  birthplace: (np) => `the birthplace of ${np}`,
  almaMater: (np) => `the university attended by ${np}`,
  headquarters: (np) => `the city where ${np} is headquartered`,
  campusCity: (np) => `the city that is home to ${np}`,
  country: (np) => `the country where ${np} lies`,
};
const ASK_REL: Record<Relation, (np: string) => string> = {
  director: (np) => `Who directed ${np}?`,
  studio: (np) => `Which studio produced ${np}?`,
  founder: (np) => `Who founded ${np}?`,
  birthplace: (np) => `Where was ${np} born?`,
  almaMater: (np) => `Which university did ${np} attend?`,
  headquarters: (np) => `In which city is ${np} headquartered?`,
  campusCity: (np) => `In which city is ${np}?`,
  country: (np) => `In which country is ${np}?`,
};
const ASK_ATTR: Record<Attribute, (np: string) => string> = {
  continent: (np) => `On which continent is ${np}?`,
  founded: (np) => `In what year was ${np} founded?`,
  born: (np) => `In what year was ${np} born?`,
  occupation: (np) => `What is the occupation of ${np}?`,
  released: (np) => `In what year was ${np} released?`,
};

function bridge(world: World, rng: Rng, hops: number): WorldQuestion | undefined {
  const endsWithAttr = rng.next() < 0.5;
  const relations = endsWithAttr ? hops - 1 : hops;
  let e = world.entities[rng.int(world.entities.length)]!;
  const start = e;
  const path: Entity[] = [e];
  const rels: Relation[] = [];
  for (let i = 0; i < relations; i++) {
    const options = Object.keys(e.rels) as Relation[];
    if (options.length === 0) return undefined;
    const r = options[rng.int(options.length)]!;
    rels.push(r);
    e = world.byId.get(e.rels[r]!)!;
    path.push(e);
  }
  let np = start.name;
  if (endsWithAttr) {
    for (const r of rels) np = NP[r](np);
    const attrs = Object.keys(e.attrs) as Attribute[];
    if (attrs.length === 0) return undefined;
    const a = attrs[rng.int(attrs.length)]!;
    return { id: '', question: ASK_ATTR[a](np), answer: e.attrs[a]!, kind: 'bridge', hops, goldPath: path.map((x) => x.name), mentions: [start.name] };
  }
  for (const r of rels.slice(0, -1)) np = NP[r](np);
  if (new Set(path.map((x) => x.id)).size < path.length) return undefined;
  return {
    id: '',
    question: ASK_REL[rels[rels.length - 1]!](np),
    answer: e.name,
    kind: 'bridge',
    hops,
    goldPath: path.slice(0, -1).map((x) => x.name),
    mentions: [start.name],
  };
}

const COMPARE: Array<{ kind: Entity['kind']; attr: Attribute; ask: (a: string, b: string, later: boolean) => string }> = [
  { kind: 'person', attr: 'born', ask: (a, b, later) => `Who was born ${later ? 'later' : 'earlier'}, ${a} or ${b}?` },
  { kind: 'film', attr: 'released', ask: (a, b, later) => `Which film came out ${later ? 'later' : 'earlier'}, ${a} or ${b}?` },
  { kind: 'company', attr: 'founded', ask: (a, b, later) => `Which company was founded ${later ? 'later' : 'earlier'}, ${a} or ${b}?` },
  { kind: 'university', attr: 'founded', ask: (a, b, later) => `Which university is ${later ? 'younger' : 'older'}, ${a} or ${b}?` },
];

function comparison(world: World, rng: Rng): WorldQuestion | undefined {
  const c = COMPARE[rng.int(COMPARE.length)]!;
  const pool = world.entities.filter((e) => e.kind === c.kind);
  const a = pool[rng.int(pool.length)]!;
  const b = pool[rng.int(pool.length)]!;
  if (a === b || a.attrs[c.attr] === b.attrs[c.attr]) return undefined;
  const later = rng.next() < 0.5;
  const aWins = later === Number(a.attrs[c.attr]) > Number(b.attrs[c.attr]);
  return {
    id: '',
    question: c.ask(a.name, b.name, later),
    answer: (aWins ? a : b).name,
    kind: 'comparison',
    hops: 2,
    goldPath: [a.name, b.name],
    mentions: [a.name, b.name],
  };
}

function yesNo(world: World, rng: Rng): WorldQuestion | undefined {
  const cities = world.entities.filter((e) => e.kind === 'city');
  const a = cities[rng.int(cities.length)]!;
  // Half the time pick a city of the same country so that "yes" is as common as "no".
  const same = cities.filter((c) => c !== a && c.rels.country === a.rels.country);
  const b = rng.next() < 0.5 && same.length > 0 ? same[rng.int(same.length)]! : cities[rng.int(cities.length)]!;
  if (a === b) return undefined;
  const answer = a.rels.country === b.rels.country ? 'yes' : 'no';
  return {
    id: '',
    question: `Are ${a.name} and ${b.name} in the same country?`,
    answer,
    kind: 'yes-no',
    hops: 2,
    goldPath: [a.name, b.name],
    mentions: [a.name, b.name],
  };
}

function bridgeComparison(world: World, rng: Rng): WorldQuestion | undefined {
  const films = world.entities.filter((e) => e.kind === 'film');
  const a = films[rng.int(films.length)]!;
  const b = films[rng.int(films.length)]!;
  const da = world.byId.get(a.rels.director!)!;
  const db = world.byId.get(b.rels.director!)!;
  if (a === b || da === db || da.attrs.born === db.attrs.born) return undefined;
  const later = rng.next() < 0.5;
  const aWins = later === Number(da.attrs.born) > Number(db.attrs.born);
  return {
    id: '',
    question: `Which film has the ${later ? 'younger' : 'older'} director, ${a.name} or ${b.name}?`,
    answer: (aWins ? a : b).name,
    kind: 'bridge-comparison',
    hops: 4,
    goldPath: [a.name, da.name, b.name, db.name],
    mentions: [a.name, b.name],
  };
}

/**
 * The late profile's question (src/env/world/profile.ts): a 3- or 4-hop bridge chain whose entities
 * are all distinct (a chain that comes back to an entity it has read leaves a choice nothing decides).
 */
function lateBridge(world: World, rng: Rng): WorldQuestion | undefined {
  const q = bridge(world, rng, 3 + rng.int(2));
  return q && new Set(q.goldPath).size === q.goldPath.length ? q : undefined;
}

/**
 * `count` distinct questions (profile late: 3–4-hop bridges only). Mix: bridge 1–4 hops (hops uniform), comparisons, yes-no and
 * bridge-comparisons, so the hop histogram covers 1–4 and difficulty spreads widely.
 */
export function generateQuestions(world: World, count: number, seed = world.seed, profile: WorldProfile = 'default'): WorldQuestion[] {
  // The late profile draws from its own stream, so the default profile's questions stay exactly as they were.
  const rng = createRng(seed).fork(profile === 'late' ? 'questions/late' : 'questions');
  const out: WorldQuestion[] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < count && tries < count * 50; tries++) {
    const u = rng.next();
    const q =
      profile === 'late'
        ? lateBridge(world, rng)
        : u < 0.65
          ? bridge(world, rng, 1 + rng.int(4))
          : u < 0.8
            ? comparison(world, rng)
            : u < 0.9
              ? yesNo(world, rng)
              : bridgeComparison(world, rng);
    if (!q || seen.has(q.question)) continue;
    seen.add(q.question);
    out.push({ ...q, id: `w${world.seed}-q${out.length}` });
  }
  return out;
}

/** Train/test split by question (texts are unique, so no question is in both). */
export function splitQuestions(
  questions: readonly WorldQuestion[],
  options: { testFraction: number; seed: number },
): { train: WorldQuestion[]; test: WorldQuestion[] } {
  const order = shuffled(questions, createRng(options.seed).fork('split'));
  const nTest = Math.round(order.length * options.testFraction);
  return { test: order.slice(0, nTest), train: order.slice(nTest) };
}
