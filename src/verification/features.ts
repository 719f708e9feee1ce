/**
 * Feature vectors of the built-in verifier.
 * - Stance features of one (claim, sentence): sentence-encoder vectors combined as (u, v, |u-v|, u*v, cos) plus
 *   the lexical families of lexical.ts. Families switched off are left out (ablations, smaller models).
 * - Pair features, in groups the pair model can switch off (ablations): how the candidates' stance probabilities
 *   add up for the whole abstract, the best candidate's lexical cues, cues aggregated over every sentence (the
 *   selector keeps few), the stacked pair-level TF-IDF probabilities, and rarity-weighted overlap (idf.ts).
 */
import { IDF_FEATURES } from "./idf.ts";
import { LEXICAL_FAMILIES, LEXICAL_NAMES, type LexicalFamily } from "./lexical.ts";

export type Family = "use_raw" | "use_pair" | LexicalFamily;
export const ALL_FAMILIES: readonly Family[] = [
  "use_raw",
  "use_pair",
  ...(Object.keys(LEXICAL_FAMILIES) as LexicalFamily[]),
];

const lexicalSlots = (families: readonly Family[]): number[] => {
  const on = new Set(families);
  const slots: number[] = [];
  for (const [family, names] of Object.entries(LEXICAL_FAMILIES)) {
    if (!on.has(family as Family)) continue;
    for (const n of names) slots.push(LEXICAL_NAMES.indexOf(n));
  }
  return slots;
};

/** The lexical features of the switched-on families, in vector order. */
export function lexicalSubset(families: readonly Family[], lexical: readonly number[]): number[] {
  return lexicalSlots(families).map((slot) => lexical[slot]);
}

export function stanceDim(families: readonly Family[], encoderDim: number): number {
  let d = lexicalSlots(families).length;
  if (families.includes("use_raw")) d += 2 * encoderDim;
  if (families.includes("use_pair")) d += 2 * encoderDim + 1;
  return d;
}

/** The stance feature vector of (claim vector u, sentence vector v, sentence lexical features). */
export function stanceFeatures(
  families: readonly Family[],
  u: Float32Array,
  v: Float32Array,
  lexical: readonly number[],
): Float32Array {
  const d = u.length;
  const out = new Float32Array(stanceDim(families, d));
  let o = 0;
  if (families.includes("use_raw")) {
    out.set(u, o);
    out.set(v, o + d);
    o += 2 * d;
  }
  if (families.includes("use_pair")) {
    let cos = 0;
    for (let j = 0; j < d; j++) {
      out[o + j] = Math.abs(u[j] - v[j]);
      out[o + d + j] = u[j] * v[j];
      cos += u[j] * v[j];
    }
    out[o + 2 * d] = cos;
    o += 2 * d + 1;
  }
  for (const slot of lexicalSlots(families)) out[o++] = lexical[slot];
  return out;
}

/** One candidate sentence of a pair: its selector probability and, with a stance model, its stance (S, R, NEI). */
export interface CandidateScore {
  index: number;
  selector: number;
  stance?: ArrayLike<number>;
}

const NO_STANCE: readonly number[] = [0, 0, 1];
const stanceOf = (c: CandidateScore): ArrayLike<number> => c.stance ?? NO_STANCE;

export const PAIR_STANCE_FEATURES = [
  "best_s",
  "best_r",
  "best_n",
  "max_s",
  "max_r",
  "log_best_s_over_n",
  "log_best_r_over_n",
  "max_selector",
  "one_sentence",
  "log_sentences",
] as const;

export type PairGroup = "stance" | "lexical" | "aggregate" | "tfidf" | "idf" | "narrative" | "narrative-x";
/** "narrative": the claim's P(narrative); "narrative-x": its product with every feature of the groups before. */
export const ALL_PAIR_GROUPS: readonly PairGroup[] = [
  "stance",
  "lexical",
  "aggregate",
  "tfidf",
  "idf",
  "narrative",
  "narrative-x",
];
/** The shipped pair groups: the ablations (BENCHMARKS.md) found that the stance group adds nothing on dev. */
export const DEFAULT_PAIR_GROUPS: readonly PairGroup[] = ["aggregate", "tfidf", "idf"];

const at = (name: string) => LEXICAL_NAMES.indexOf(name);
const MAX_OVER_SENTENCES = ["recall", "bigram_recall", "sent_null", "dir_disagree", "antonym"].map(at);
const OF_BEST_OVERLAP = ["neg_mismatch", "sent_null", "dir_disagree", "antonym", "num_mismatch"].map(at);

/**
 * Cues over all sentences, not only the encoded candidates: the best overlap anywhere, whether any sentence
 * reports a null result, a direction conflict or an antonym, and the polarity cues of the best-overlap sentence.
 */
export function aggregateFeatures(lexical: readonly (readonly number[])[]): number[] {
  let best = 0;
  const recall = at("recall");
  for (let j = 1; j < lexical.length; j++) if (lexical[j][recall] > lexical[best][recall]) best = j;
  const max = (slot: number) => lexical.reduce((m, x) => Math.max(m, x[slot]), 0);
  return [...MAX_OVER_SENTENCES.map(max), ...OF_BEST_OVERLAP.map((slot) => lexical[best][slot])];
}
const AGGREGATE_DIM = MAX_OVER_SENTENCES.length + OF_BEST_OVERLAP.length;

export function pairDim(
  families: readonly Family[],
  groups: readonly PairGroup[] = ["stance", "lexical"],
): number {
  let d = 0;
  if (groups.includes("stance")) d += PAIR_STANCE_FEATURES.length;
  if (groups.includes("lexical")) d += lexicalSlots(families).length;
  if (groups.includes("aggregate")) d += AGGREGATE_DIM;
  if (groups.includes("tfidf")) d += 5;
  if (groups.includes("idf")) d += IDF_FEATURES.length;
  const base = d;
  if (groups.includes("narrative")) d += 1;
  if (groups.includes("narrative-x")) d += base;
  return d;
}

/** The candidate whose stance is least NEI (ties, and without stance: the earlier candidate). */
export function bestCandidate(candidates: readonly CandidateScore[]): CandidateScore {
  let best = candidates[0];
  for (const c of candidates) if (stanceOf(c)[2] < stanceOf(best)[2]) best = c;
  return best;
}

/** What the pair features are built from, for one pair. */
export interface PairInputs {
  candidates: readonly CandidateScore[];
  lexical: readonly (readonly number[])[];
  /** Pair-level TF-IDF probabilities (S, R, NEI); needed when the "tfidf" group is on. */
  tfidf?: ArrayLike<number>;
  /** The "idf" group's features (idf.ts); needed when that group is on. */
  idf?: readonly number[];
  /** The claim's P(narrative) (claim-narrative.ts); needed when the "narrative" group is on. */
  narrative?: number;
}

const logOdds = (a: number, b: number) => Math.log((a + 1e-4) / (b + 1e-4));

/** Pair features of the switched-on groups, in ALL_PAIR_GROUPS order (see pairDim). */
export function pairFeatures(
  families: readonly Family[],
  groups: readonly PairGroup[],
  input: PairInputs,
): Float32Array {
  const { candidates, lexical } = input;
  const out: number[] = [];
  const best = bestCandidate(candidates);
  if (groups.includes("stance")) {
    if (candidates.some((c) => !c.stance)) throw new Error("pairFeatures: the stance group needs stances");
    let maxS = 0;
    let maxR = 0;
    let maxSel = 0;
    for (const c of candidates) {
      maxS = Math.max(maxS, stanceOf(c)[0]);
      maxR = Math.max(maxR, stanceOf(c)[1]);
      maxSel = Math.max(maxSel, c.selector);
    }
    const eps = 1e-6;
    const bs = stanceOf(best);
    out.push(
      bs[0],
      bs[1],
      bs[2],
      maxS,
      maxR,
      Math.log((bs[0] + eps) / (bs[2] + eps)),
      Math.log((bs[1] + eps) / (bs[2] + eps)),
      maxSel,
      lexical.length === 1 ? 1 : 0,
      Math.log(lexical.length) / 3,
    );
  }
  // The best candidate's own lexical cues: polarity reaches the pair decision directly.
  if (groups.includes("lexical")) out.push(...lexicalSubset(families, lexical[best.index]));
  if (groups.includes("aggregate")) out.push(...aggregateFeatures(lexical));
  if (groups.includes("tfidf")) {
    const p = input.tfidf;
    if (!p) throw new Error("pairFeatures: the tfidf group needs the TF-IDF probabilities");
    out.push(logOdds(p[0], p[2]), logOdds(p[1], p[2]), p[0], p[1], p[2]);
  }
  if (groups.includes("idf")) {
    if (!input.idf) throw new Error("pairFeatures: the idf group needs its features");
    out.push(...input.idf);
  }
  // The claim's P(narrative) and (interactions) what the evidence says, weighed by it.
  if (groups.includes("narrative") || groups.includes("narrative-x")) {
    const q = input.narrative;
    if (q === undefined) throw new Error("pairFeatures: the narrative groups need the claim's P(narrative)");
    const base = out.length;
    if (groups.includes("narrative")) out.push(q);
    if (groups.includes("narrative-x")) for (let j = 0; j < base; j++) out.push(q * out[j]);
  }
  return Float32Array.from(out);
}
