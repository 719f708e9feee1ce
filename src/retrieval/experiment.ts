/**
 * Shared by training and the benchmark: stage 1 and full features of a set of claims, computed once, then any
 * fusion, feature subset or model is evaluated on them with the official scorer (src/evaluation/metrics.ts).
 */
import { type Interval, itemInterval } from "../evaluation/bootstrap.ts";
import {
  type RetrievalScores,
  relevantByClaim,
  scoreRetrieval,
  scoreRetrievalPerClaim,
} from "../evaluation/metrics.ts";
import { hashSplit, hashUnit } from "../learning/split.ts";
import type { Claim, LabelledPair, Task1Prediction } from "../types.ts";
import { FAMILIES, type Family, featureNames } from "./features.ts";
import { type FusionWeights, linearFusion, order } from "./fusion.ts";
import { DEFAULT_PAIRWISE, type Reranker, type TrainingGroup, trainPairwise } from "./reranker.ts";
import type { Retriever, Stage1 } from "./retriever.ts";

export interface PreparedClaim {
  claim: Claim;
  stage: Stage1;
  /** Candidate indices (fused order) that have feature rows. */
  rows: number[];
  /** Feature rows of all families. */
  x: Float32Array[];
  relevant: boolean[];
}

export interface Prepared {
  names: string[];
  families: Family[];
  claims: PreparedClaim[];
  gold: LabelledPair[];
}

/** Stage 1 with the given fusion, then features of the top `depth` candidates with every family available. */
export async function prepare(
  retriever: Retriever,
  claims: Claim[],
  gold: LabelledPair[],
  fusion: FusionWeights,
  depth: number,
  withWordVectors: boolean,
  /** Stage 1 already computed for these claims (re-fused here), to avoid embedding the claims twice. */
  stages?: Stage1[],
): Promise<Prepared> {
  const families = FAMILIES.filter((f) => f !== "wordvec" || withWordVectors);
  const relevantOf = relevantByClaim(gold);
  const base = stages ?? (await retriever.stage1(claims.map((c) => c.text)));
  const out: PreparedClaim[] = base.map((s0, i) => {
    const fused = linearFusion(s0.cands, fusion);
    const stage = { ...s0, fused, order: order(s0.cands, fused) };
    const { rows, x } = retriever.features(stage, families, depth);
    const rel = relevantOf.get(claims[i].id) ?? new Set<string>();
    const relevant = rows.map((r) => rel.has(retriever.index.docs.id(stage.cands[r].docno)));
    return { claim: claims[i], stage, rows, x, relevant };
  });
  // Score only the claims at hand: gold of other claims would count as misses.
  const ids = new Set(claims.map((c) => c.id));
  return {
    names: featureNames(families, retriever.vectorSets),
    families,
    claims: out,
    gold: gold.filter((g) => ids.has(g.claimId)),
  };
}

/** Re-fuses stage 1 with other weights (candidates are unchanged; features relative to the old fusion are not). */
export function refuse(p: Prepared, fusion: FusionWeights): Stage1[] {
  return p.claims.map(({ stage }) => {
    const fused = linearFusion(stage.cands, fusion);
    return { ...stage, fused, order: order(stage.cands, fused) };
  });
}

/** Predictions from a per-claim ordering of candidate indices. */
function predictions(p: Prepared, orders: number[][], retriever: Retriever, k: number): Task1Prediction[] {
  const out: Task1Prediction[] = [];
  orders.forEach((o, i) => {
    const c = p.claims[i];
    o.slice(0, k).forEach((cand, r) => {
      out.push({
        claimId: c.claim.id,
        abstractId: retriever.index.docs.id(c.stage.cands[cand].docno),
        rank: r + 1,
      });
    });
  });
  return out;
}

/** Predictions of stage 1 under a fusion. */
export function fusionPredictions(
  p: Prepared,
  retriever: Retriever,
  fusion: FusionWeights,
  k = 10,
): Task1Prediction[] {
  return predictions(
    p,
    refuse(p, fusion).map((s) => s.order),
    retriever,
    k,
  );
}

/** Scores of stage 1 under a fusion. */
export function scoreFusion(
  p: Prepared,
  retriever: Retriever,
  fusion: FusionWeights,
  k = 10,
): RetrievalScores {
  return scoreRetrieval(fusionPredictions(p, retriever, fusion, k), p.gold);
}

export type Metric = "recall_at_2" | "recall_at_5" | "recall_at_10" | "bpref" | "ndcg_at_10";
export const METRICS: Metric[] = ["recall_at_2", "recall_at_5", "recall_at_10", "bpref", "ndcg_at_10"];

/** Each metric with a bootstrap 95% interval over claims (Bpref over the resampled claims that have it). */
export function scoreWithIntervals(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
  resamples = 1000,
): Record<Metric, Interval> {
  const per = scoreRetrievalPerClaim(preds, gold).map((c) => c.scores);
  const out = {} as Record<Metric, Interval>;
  for (const m of METRICS) {
    out[m] = itemInterval(
      per.length,
      (idx) => {
        let s = 0;
        let n = 0;
        for (const i of idx) {
          if (m === "bpref" && per[i].bpref_claims === 0) continue;
          s += per[i][m];
          n++;
        }
        return n ? s / n : 0;
      },
      { resamples, seed: 14 },
    );
  }
  return out;
}

/**
 * The mean per-claim difference a - b of a metric (not Bpref: it is not scored on every claim), with a paired
 * bootstrap 95% interval: each resample draws the same claims for both systems.
 */
export function pairedDifference(
  a: readonly Task1Prediction[],
  b: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
  metric: Exclude<Metric, "bpref">,
  resamples = 1000,
): Interval {
  // The claims scored (those with a relevant abstract, in gold order) depend on the gold only: the rows pair up.
  const pa = scoreRetrievalPerClaim(a, gold);
  const pb = scoreRetrievalPerClaim(b, gold);
  const d = pa.map((c, i) => c.scores[metric] - pb[i].scores[metric]);
  return itemInterval(d.length, (idx) => idx.reduce((s, i) => s + d[i], 0) / (idx.length || 1), {
    resamples,
    seed: 14,
  });
}

/** The prepared claims of fold `f` of `k` (by claim id), and the rest. */
export function foldPrepared(p: Prepared, k: number, f: number, salt: string): [Prepared, Prepared] {
  const part = (inFold: boolean): Prepared => {
    const claims = p.claims.filter((c) => (Math.floor(hashUnit(c.claim.id, salt) * k) === f) === inFold);
    const ids = new Set(claims.map((c) => c.claim.id));
    return { ...p, claims, gold: p.gold.filter((g) => ids.has(g.claimId)) };
  };
  return [part(false), part(true)];
}

/** The prepared claims with feature rows for the top `depth` only (the rest stays in fused order). */
export function truncatePrepared(p: Prepared, depth: number): Prepared {
  return {
    ...p,
    claims: p.claims.map((c) => ({
      ...c,
      rows: c.rows.slice(0, depth),
      x: c.x.slice(0, depth),
      relevant: c.relevant.slice(0, depth),
    })),
  };
}

/** Column indices of the features of the given families. */
export function columns(p: Prepared, families: readonly Family[], vectorSets: readonly string[]): number[] {
  const want = new Set(featureNames(families, vectorSets));
  return p.names.map((n, i) => (want.has(n) ? i : -1)).filter((i) => i >= 0);
}

const pick = (x: Float32Array, cols: number[]) => Float32Array.from(cols, (c) => x[c]);

/** The prepared claims split in two by claim id (for choosing hyper-parameters inside the training split). */
export function splitPrepared(p: Prepared, fraction: number, salt: string): [Prepared, Prepared] {
  const part = (dev: boolean): Prepared => {
    const claims = p.claims.filter((c) => (hashSplit(c.claim.id, fraction, salt) === "dev") === dev);
    const ids = new Set(claims.map((c) => c.claim.id));
    return { ...p, claims, gold: p.gold.filter((g) => ids.has(g.claimId)) };
  };
  return [part(false), part(true)];
}

/** Training groups from prepared claims, restricted to some columns; each data set weighs the same in total. */
export function groups(p: Prepared, cols: number[]): TrainingGroup[] {
  const usable = p.claims.filter((c) => c.relevant.some(Boolean) && c.relevant.some((r) => !r));
  return usable.map((c) => ({
    rows: c.x.map((x) => pick(x, cols)),
    relevant: c.relevant,
    weight: 1 / usable.length,
  }));
}

export type Scorer = (x: Float32Array) => number;

export function fitScorer(
  train: TrainingGroup[],
  l2 = DEFAULT_PAIRWISE.l2,
): { scorer: Scorer; fit: ReturnType<typeof trainPairwise> } {
  const fit = trainPairwise(train, { ...DEFAULT_PAIRWISE, l2 });
  const { standardiser, model } = fit;
  const scorer: Scorer = (x) => {
    let s = model.bias[0];
    for (let j = 0; j < x.length; j++)
      s += ((x[j] - standardiser.mean[j]) / standardiser.std[j]) * model.weights[j];
    return s;
  };
  return { scorer, fit };
}

/** Scores of re-ranking the prepared head with a scorer over the given columns (tail stays in fused order). */
export function scoreReranked(
  p: Prepared,
  retriever: Retriever,
  scorer: Scorer,
  cols: number[],
  k = 10,
): RetrievalScores {
  return scoreRetrieval(rerankedPredictions(p, retriever, scorer, cols, k), p.gold);
}

/** Predictions of re-ranking the prepared head with a scorer (tail in fused order). */
export function rerankedPredictions(
  p: Prepared,
  retriever: Retriever,
  scorer: Scorer,
  cols: number[],
  k = 10,
): Task1Prediction[] {
  const orders = p.claims.map((c) => {
    const s = c.x.map((x) => scorer(pick(x, cols)));
    const head = c.rows
      .map((r, j) => ({ r, s: s[j] }))
      .sort((a, b) => b.s - a.s || c.stage.cands[a.r].docno - c.stage.cands[b.r].docno)
      .map((h) => h.r);
    return [...head, ...c.stage.order.slice(c.rows.length)];
  });
  return predictions(p, orders, retriever, k);
}

/** The shipped re-ranker's predictions on prepared claims (uses all its columns by name, its own depth). */
export function modelPredictions(
  p: Prepared,
  retriever: Retriever,
  model: Reranker,
  k = 10,
): Task1Prediction[] {
  const cols = model.json.names.map((n) => p.names.indexOf(n));
  if (cols.some((c) => c < 0)) throw new Error("model features missing from the prepared claims");
  return rerankedPredictions(
    truncatePrepared(p, model.json.rerankDepth),
    retriever,
    (x) => model.score(x),
    cols,
    k,
  );
}

/** The shipped re-ranker's scores on prepared claims. */
export function scoreModel(p: Prepared, retriever: Retriever, model: Reranker, k = 10): RetrievalScores {
  return scoreRetrieval(modelPredictions(p, retriever, model, k), p.gold);
}
