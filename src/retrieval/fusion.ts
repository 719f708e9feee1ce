/**
 * Fusion of lexical and dense candidate lists. Linear fusion min-max normalises each signal over the candidate
 * list (so weights mean the same for every query) and adds them with weights tuned on training claims; RRF is
 * kept as a weight-free baseline for the ablations.
 */
import type { Candidate } from "./candidates.ts";

export interface FusionWeights {
  bm25: number;
  /** Weight per vector set name; absent names weigh 0. */
  dense: Record<string, number>;
}

function minMax(values: number[]): number[] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const span = hi - lo;
  return values.map((v) => (span > 0 ? (v - lo) / span : 0));
}

/** Normalised signals per candidate: bm25 and each dense set in [0, 1] over this list. */
export function normalisedSignals(cands: Candidate[]): { bm25: number[]; dense: Record<string, number[]> } {
  const names = cands.length ? Object.keys(cands[0].dense) : [];
  return {
    bm25: minMax(cands.map((c) => c.bm25)),
    dense: Object.fromEntries(names.map((n) => [n, minMax(cands.map((c) => c.dense[n]))])),
  };
}

export function linearFusion(cands: Candidate[], weights: FusionWeights): number[] {
  const s = normalisedSignals(cands);
  return cands.map((_, i) => {
    let score = weights.bm25 * s.bm25[i];
    for (const [name, w] of Object.entries(weights.dense)) if (s.dense[name]) score += w * s.dense[name][i];
    return score;
  });
}

/** A named stage-1 scoring rule (e.g. "rrf k=60"). */
export interface FusionRule {
  name: string;
  fuse(cands: Candidate[]): number[];
}

/** Reciprocal rank fusion (k = 60) over the BM25 list and each dense list. */
export function rrfFusion(cands: Candidate[], k = 60): number[] {
  return cands.map((c) => {
    let score = 1 / (k + 1 + c.bm25Rank);
    for (const r of Object.values(c.denseRank)) score += 1 / (k + 1 + r);
    return score;
  });
}

/** Reciprocal rank fusion of several score lists over the same items: sum of 1 / (k + 1 + rank), rank from 0. */
export function rrfCombine(scoreLists: readonly number[][], k: number): number[] {
  const n = scoreLists[0]?.length ?? 0;
  const out = new Array<number>(n).fill(0);
  for (const scores of scoreLists) {
    const order = scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
    order.forEach((i, rank) => {
      out[i] += 1 / (k + 1 + rank);
    });
  }
  return out;
}

/** Candidate indices ordered by score, best first; ties by docno so results are deterministic. */
export function order(cands: Candidate[], scores: number[]): number[] {
  return cands.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || cands[a].docno - cands[b].docno);
}
