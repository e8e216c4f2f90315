/** Data model of the embedded multi-hop world: typed entities, relations, passages, questions. */

export type EntityKind = 'country' | 'city' | 'university' | 'person' | 'company' | 'film';

/** Relations between entities (subject kind → object kind). */
export type Relation = 'country' | 'birthplace' | 'almaMater' | 'campusCity' | 'headquarters' | 'founder' | 'director' | 'studio';

/** Attribute facts (values are strings: years, continents, occupations). */
export type Attribute = 'continent' | 'founded' | 'born' | 'occupation' | 'released';

export interface Entity {
  id: string;
  kind: EntityKind;
  name: string;
  attrs: Partial<Record<Attribute, string>>;
  rels: Partial<Record<Relation, string>>;
  /** Names of other entities that look alike (shared name token); what makes a search go astray. */
  lookalikes: string[];
}

export interface WorldPassage {
  id: string;
  /** The entity's name. */
  title: string;
  text: string;
  entityId: string;
  /** Entity names the passage mentions (itself excluded). */
  mentions: string[];
  /** Attribute values the passage states (years, continents, occupations). */
  values: string[];
}

export type QuestionKind = 'bridge' | 'comparison' | 'bridge-comparison' | 'yes-no';

export interface WorldQuestion {
  id: string;
  question: string;
  answer: string;
  kind: QuestionKind;
  /** Passages that must be read (= searches on the gold path). */
  hops: number;
  /** Entity names to search, in order (the gold search path). */
  goldPath: string[];
  /** Entity names written in the question. */
  mentions: string[];
}

export interface World {
  seed: number;
  entities: Entity[];
  passages: WorldPassage[];
  /** Name → entity. */
  byName: Map<string, Entity>;
  byId: Map<string, Entity>;
}
