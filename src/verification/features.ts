/**
 * Feature vectors of the built-in verifier.
 * - Stance features of one (claim, sentence): sentence-encoder vectors combined as (u, v, |u-v|, u*v, cos) plus
 *   the lexical families of lexical.ts. Families switched off are left out (ablations, smaller models).
 * - Pair features: how the stance probabilities of the candidate sentences add up for the whole abstract.
 */
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

/** One candidate sentence of a pair: its selector probability and its stance probabilities (S, R, NEI). */
export interface CandidateScore {
  index: number;
  selector: number;
  stance: ArrayLike<number>;
}

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

export function pairDim(families: readonly Family[]): number {
  return PAIR_STANCE_FEATURES.length + lexicalSlots(families).length;
}

/** The candidate whose stance is least NEI (ties: the earlier candidate). */
export function bestCandidate(candidates: readonly CandidateScore[]): CandidateScore {
  let best = candidates[0];
  for (const c of candidates) if (c.stance[2] < best.stance[2]) best = c;
  return best;
}

/**
 * Pair features: stance aggregates plus the lexical features of the least-NEI candidate (polarity cues such as
 * null results reach the pair decision directly, not only through the wide stance model).
 */
export function pairFeatures(
  families: readonly Family[],
  candidates: readonly CandidateScore[],
  sentenceCount: number,
  lexicalOf: (index: number) => readonly number[],
): Float32Array {
  const best = bestCandidate(candidates);
  let maxS = 0;
  let maxR = 0;
  let maxSel = 0;
  for (const c of candidates) {
    maxS = Math.max(maxS, c.stance[0]);
    maxR = Math.max(maxR, c.stance[1]);
    maxSel = Math.max(maxSel, c.selector);
  }
  const eps = 1e-6;
  const stance = [
    best.stance[0],
    best.stance[1],
    best.stance[2],
    maxS,
    maxR,
    Math.log((best.stance[0] + eps) / (best.stance[2] + eps)),
    Math.log((best.stance[1] + eps) / (best.stance[2] + eps)),
    maxSel,
    sentenceCount === 1 ? 1 : 0,
    Math.log(sentenceCount) / 3,
  ];
  return Float32Array.from([...stance, ...lexicalSubset(families, lexicalOf(best.index))]);
}
