/**
 * Whether an abstract's main subject is the claim's subject, read from where a paper states it: its title and its
 * first sentences. Shared words alone do not tell (a microfluidics paper that samples sea water shares "ocean" and
 * "CO2" with an ocean-acidification claim), so each claim word is matched softly (its best word-vector cosine in
 * the title, in the lead), weighted by rarity, and the claim's rarest words are scored on their own. Every feature
 * is a property of the pair alone, never of a candidate list, so the gate's probability does not depend on rank.
 */
import { contentTokens, tokenize } from "../text/tokenize.ts";
import type { IdfTable } from "./idf.ts";
import { matchKey } from "./lexical.ts";

/** Word vectors as the subject features read them (src/encoders/word-vectors.ts). */
export interface WordLookup {
  vector(word: string): Float32Array | undefined;
  sif(tokens: string[]): Float32Array;
}

export const SUBJECT_FEATURES: readonly string[] = [
  "soft_title",
  "soft_lead",
  "soft_abstract",
  "rare3_title",
  "rare3_lead",
  "exact_share_title",
  "sif_title",
  "sif_best_sentence",
  "sif_best_early",
  "bm25_self",
];

/** How many leading sentences count as the lead (where an abstract states its subject). */
const LEAD_SENTENCES = 2;
/** The claim's rarest words scored on their own. */
const RARE_WORDS = 3;
/** BM25 constants of the self-normalised score (the usual ones; the score is divided by the claim's own). */
const K1 = 1.2;
const B = 0.75;
const AVG_ABSTRACT_TOKENS = 200;

/** Unit word vectors, looked up once per word. */
export class UnitWords {
  private readonly memo = new Map<string, Float32Array | null>();
  constructor(readonly words: WordLookup) {}

  of(word: string): Float32Array | null {
    let v = this.memo.get(word);
    if (v === undefined) {
      const raw = this.words.vector(word);
      v = raw ? unit(raw) : null;
      this.memo.set(word, v);
    }
    return v;
  }

  sif(tokens: string[]): Float32Array {
    return this.words.sif(tokens);
  }
}

function unit(v: Float32Array): Float32Array | null {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  if (n === 0) return null;
  const s = 1 / Math.sqrt(n);
  return v.map((x) => x * s);
}

function dot(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
}

/**
 * The best match of each claim word among a segment's distinct words: 1 for the same word or key, else the best
 * cosine (0 for a word without a vector). Segments are disjoint, so a side's best is the max over its segments.
 */
function bestMatches(
  words: UnitWords,
  claimWords: readonly string[],
  claimVectors: readonly (Float32Array | null)[],
  segment: ReadonlySet<string>,
): number[] {
  const keys = new Set([...segment].map(matchKey));
  const vectors = [...segment].map((t) => words.of(t)).filter((v): v is Float32Array => v !== null);
  return claimWords.map((w, i) => {
    if (segment.has(w) || keys.has(matchKey(w))) return 1;
    const v = claimVectors[i];
    if (!v) return 0;
    let best = 0;
    for (const u of vectors) best = Math.max(best, dot(v, u));
    return best;
  });
}

/** The subject features of one pair (order: SUBJECT_FEATURES). */
export function subjectFeatures(
  words: UnitWords,
  idf: IdfTable,
  claim: string,
  sentences: readonly string[],
  title: string | undefined,
): number[] {
  const claimWords = [...new Set(contentTokens(claim))];
  const claimVectors = claimWords.map((w) => words.of(w));
  const weight = claimWords.map((w) => idf.weight(matchKey(w)));
  const total = weight.reduce((a, b) => a + b, 0) || 1;
  // Title, lead and the rest as disjoint word sets: each word's vector is compared once.
  const titleSet = new Set(title ? contentTokens(title) : []);
  const leadSet = new Set(sentences.slice(0, LEAD_SENTENCES).flatMap((t) => contentTokens(t)));
  for (const w of titleSet) leadSet.delete(w);
  const restSet = new Set(sentences.slice(LEAD_SENTENCES).flatMap((t) => contentTokens(t)));
  for (const w of [...titleSet, ...leadSet]) restSet.delete(w);
  const bTitle = bestMatches(words, claimWords, claimVectors, titleSet);
  const bLead = bestMatches(words, claimWords, claimVectors, leadSet);
  const bRest = bestMatches(words, claimWords, claimVectors, restSet);
  const sTitle = bTitle;
  const sLead = bTitle.map((x, i) => Math.max(x, bLead[i]));
  const sAll = sLead.map((x, i) => Math.max(x, bRest[i]));
  const titleKeys = new Set([...titleSet].map(matchKey));
  const weighted = (m: number[]) => m.reduce((a, x, i) => a + x * weight[i], 0) / total;
  const rare = weight
    .map((w, i) => [w, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, RARE_WORDS)
    .map(([, i]) => i);
  const mean = (m: number[]) => (rare.length ? rare.reduce((a, i) => a + m[i], 0) / rare.length : 0);
  const exactTitle = claimWords.length
    ? claimWords.filter((w) => titleKeys.has(matchKey(w))).length / claimWords.length
    : 0;
  const claimSif = words.sif(tokenize(claim));
  const sifTitle = title ? dot(claimSif, words.sif(tokenize(title))) : 0;
  let best = 0;
  let bestAt = sentences.length;
  sentences.forEach((s, i) => {
    const c = dot(claimSif, words.sif(tokenize(s)));
    if (c > best) [best, bestAt] = [c, i];
  });
  return [
    weighted(sTitle),
    weighted(sLead),
    weighted(sAll),
    mean(sTitle),
    mean(sLead),
    exactTitle,
    sifTitle,
    best,
    // A best-matching sentence early in the abstract states its subject; one deep in it is often an aside.
    sentences.length ? 1 / (1 + bestAt) : 0,
    bm25Self(idf, claim, [title ?? "", ...sentences].join(" ")),
  ];
}

/** BM25 of the claim's keys against a text over its most (every key, saturated): 0 none shared, 1 all, often. */
export function bm25Self(idf: IdfTable, claim: string, text: string): number {
  const keys = [...new Set(contentTokens(claim).map(matchKey))];
  if (keys.length === 0) return 0;
  const tf = new Map<string, number>();
  const tokens = contentTokens(text).map(matchKey);
  for (const k of tokens) tf.set(k, (tf.get(k) ?? 0) + 1);
  const norm = K1 * (1 - B + (B * tokens.length) / AVG_ABSTRACT_TOKENS);
  let score = 0;
  let self = 0;
  for (const k of keys) {
    const w = idf.weight(k);
    const f = tf.get(k) ?? 0;
    score += (w * f * (K1 + 1)) / (f + norm);
    self += w;
  }
  return score / (self * (K1 + 1));
}
