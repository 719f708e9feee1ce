/**
 * Chooses the BM25 settings per corpus kind on training claims only: k1, b and the title weight by 5-fold
 * cross-validation over a grid (objective R@5 + nDCG@10 of BM25's top 10), then whether RM3 feedback pays
 * (same folds, kept only when its cross-validated objective beats plain BM25's), then the candidate depth.
 * Writes models/retrieval/bm25.json, which ingest reads at finalise (src/index/bm25-settings.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCorpus } from "../data/climatecheck.ts";
import { writeFileAtomic } from "../data/tables.ts";
import { recallAt, scoreRetrievalPerClaim } from "../evaluation/metrics.ts";
import {
  Bm25Builder,
  Bm25Index,
  type Bm25Params,
  indexTerms,
  type QueryTerm,
  STOCK_PARAMS,
} from "../index/bm25.ts";
import { BM25_TUNING_PATH, type Bm25Tuning, corpusKind, type KindTuning } from "../index/bm25-settings.ts";
import { type Rm3Options, rm3Expand } from "../index/rm3.ts";
import type { CorpusKind } from "../index/schema.ts";
import { hashUnit } from "../learning/split.ts";
import { type Analyzer, BM25_ANALYZER } from "../text/stem.ts";
import type { Claim, LabelledPair, Task1Prediction } from "../types.ts";
import type { EvalSet } from "./eval-sets.ts";

export const K1_GRID = [0.4, 0.6, 0.9, 1.2, 1.6, 2.0];
export const B_GRID = [0.2, 0.4, 0.6, 0.75, 0.9, 1.0];
export const TITLE_GRID = [0.25, 0.5, 1, 2, 3];
export const RM3_GRID: Rm3Options[] = [3, 10].flatMap((docs) =>
  [10, 25].flatMap((terms) => [0.5, 0.7, 0.85].map((originalWeight) => ({ docs, terms, originalWeight }))),
);
export const DEPTH_GRID = [100, 200, 300, 500, 1000];
const FOLDS = 5;

/** A corpus as the index sees it: ids, titles and abstracts in docno order (first occurrence of an id). */
export interface CorpusDocs {
  ids: string[];
  titles: string[];
  abstracts: string[];
  sentences: number;
}

export async function loadCorpusDocs(set: Pick<EvalSet, "corpus" | "format">): Promise<CorpusDocs> {
  const out: CorpusDocs = { ids: [], titles: [], abstracts: [], sentences: 0 };
  const seen = new Set<string>();
  for await (const { abstract: a } of readCorpus(set.corpus, { format: set.format, onSkip: () => {} })) {
    if (seen.has(a.id)) continue;
    seen.add(a.id);
    out.ids.push(a.id);
    out.titles.push(a.title ?? "");
    out.abstracts.push(a.abstract);
    out.sentences += a.sentences?.length || 1;
  }
  return out;
}

/** A BM25 index of a corpus in memory (files in a temporary folder, read back, then deleted). */
export async function memoryIndex(docs: CorpusDocs, analyzer: Analyzer = BM25_ANALYZER): Promise<Bm25Index> {
  const b = new Bm25Builder(analyzer);
  for (let i = 0; i < docs.ids.length; i++) b.add(docs.titles[i], docs.abstracts[i]);
  const dir = mkdtempSync(join(tmpdir(), "cc-bm25-"));
  try {
    await b.write(dir);
    return new Bm25Index(dir, { analyzer });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The BM25 query of each claim, RM3-expanded when asked. */
export function bm25Queries(
  index: Bm25Index,
  docs: CorpusDocs,
  claims: Claim[],
  rm3?: Rm3Options | null,
  docTermsMemo = new Map<number, string[]>(),
): QueryTerm[][] {
  const docTerms = (d: number) => {
    let t = docTermsMemo.get(d);
    if (!t) {
      t = indexTerms(`${docs.titles[d]} ${docs.abstracts[d]}`, index.analyzer);
      docTermsMemo.set(d, t);
    }
    return t;
  };
  return claims.map((c) => {
    const q = index.queryTerms(c.text);
    return rm3 ? rm3Expand(index, q, index.search(q, rm3.docs), docTerms, rm3) : q;
  });
}

/** Top-k predictions of BM25 for the claims. */
export function bm25Predictions(
  index: Bm25Index,
  docs: CorpusDocs,
  claims: Claim[],
  queries: QueryTerm[][],
  k = 10,
): Task1Prediction[] {
  const out: Task1Prediction[] = [];
  claims.forEach((c, i) => {
    index.search(queries[i], k).forEach((h, r) => {
      out.push({ claimId: c.id, abstractId: docs.ids[h.docno], rank: r + 1 });
    });
  });
  return out;
}

/** Per-claim objective (R@5 + nDCG@10), keyed by claim id (claims with a relevant abstract only). */
function perClaimObjective(preds: Task1Prediction[], gold: LabelledPair[]): Map<string, number> {
  return new Map(
    scoreRetrievalPerClaim(preds, gold).map((c) => [c.claimId, c.scores.recall_at_5 + c.scores.ndcg_at_10]),
  );
}

interface Cv<T> {
  /** The choice on all training claims. */
  best: T;
  /** Mean objective on all training claims of the best. */
  train: number;
  /** Cross-validated objective of choosing by this procedure (chosen on 4 folds, scored on the 5th). */
  cv: number;
}

/** Grid choice with a cross-validated estimate of how the choosing procedure does on unseen claims. */
function crossValidate<T>(
  candidates: T[],
  objective: (c: T) => Map<string, number>,
  foldOf: (id: string) => number,
): Cv<T> {
  const per = candidates.map(objective);
  const mean = (m: Map<string, number>, keep: (f: number) => boolean) => {
    let s = 0;
    let n = 0;
    for (const [id, v] of m)
      if (keep(foldOf(id))) {
        s += v;
        n++;
      }
    return n ? s / n : 0;
  };
  const argmax = (keep: (f: number) => boolean) => {
    let bi = 0;
    for (let i = 1; i < per.length; i++) if (mean(per[i], keep) > mean(per[bi], keep) + 1e-12) bi = i;
    return bi;
  };
  let cvSum = 0;
  let cvN = 0;
  for (let f = 0; f < FOLDS; f++) {
    const chosen = argmax((g) => g !== f);
    for (const [id, v] of per[chosen])
      if (foldOf(id) === f) {
        cvSum += v;
        cvN++;
      }
  }
  const bi = argmax(() => true);
  return { best: candidates[bi], train: mean(per[bi], () => true), cv: cvN ? cvSum / cvN : 0 };
}

export interface KindReport {
  set: string;
  kind: CorpusKind;
  claims: number;
  tuning: KindTuning;
  /** Mean R@5 + nDCG@10 over training claims: stock parameters, and cross-validated for the tuned choice. */
  stockObjective: number;
  /** The grid's choice on all training claims, and whether it beat stock cross-validated (else stock ships). */
  gridBest: Bm25Params;
  gridKept: boolean;
  paramsCv: number;
  rm3Cv: number;
  rm3Kept: boolean;
  recallAtDepth: Record<number, number>;
}

/** Tunes one eval set's corpus kind on its training claims. */
export async function tuneSet(set: EvalSet, log = (_: string) => {}): Promise<KindReport> {
  const docs = await loadCorpusDocs(set);
  const kind = corpusKind(docs.ids.length, docs.sentences);
  const index = await memoryIndex(docs);
  const claims = set.train;
  const ids = new Set(claims.map((c) => c.id));
  const gold = set.gold.filter((g) => ids.has(g.claimId));
  const foldOf = (id: string) => Math.floor(hashUnit(id, "bm25-cv") * FOLDS);
  const plain = bm25Queries(index, docs, claims);
  const grid: Bm25Params[] = K1_GRID.flatMap((k1) =>
    B_GRID.flatMap((b) => TITLE_GRID.map((titleWeight) => ({ k1, b, titleWeight }))),
  );
  const atParams = (p: Bm25Params) => {
    index.setParams(p);
    return perClaimObjective(bm25Predictions(index, docs, claims, plain), gold);
  };
  const stock = atParams(STOCK_PARAMS);
  const stockObjective = [...stock.values()].reduce((a, b) => a + b, 0) / Math.max(stock.size, 1);
  const params = crossValidate(grid, atParams, foldOf);
  log(
    `${set.name} (${kind}): k1 ${params.best.k1} b ${params.best.b} title ${params.best.titleWeight}; objective stock ${stockObjective.toFixed(4)}, tuned on train ${params.train.toFixed(4)}, cross-validated ${params.cv.toFixed(4)}`,
  );
  // The grid's choice must beat the stock values on held-out folds, or the stock values stay.
  const gridKept = params.cv > stockObjective;
  const chosen = gridKept ? params.best : STOCK_PARAMS;
  const chosenCv = gridKept ? params.cv : stockObjective;
  log(
    `${set.name}: ${gridKept ? "tuned parameters kept" : "stock parameters kept (the grid's choice did worse cross-validated)"}`,
  );
  index.setParams(chosen);
  // RM3: the best feedback setting under the same folds, kept only if it beats plain BM25 cross-validated.
  const memo = new Map<number, string[]>();
  const rm3Only = crossValidate(
    RM3_GRID,
    (o) =>
      perClaimObjective(
        bm25Predictions(index, docs, claims, bm25Queries(index, docs, claims, o, memo)),
        gold,
      ),
    foldOf,
  );
  const rm3Kept = rm3Only.cv > chosenCv;
  const chosenRm3 = rm3Kept ? rm3Only.best : null;
  log(
    `${set.name}: RM3 best ${JSON.stringify(rm3Only.best)} cross-validated ${rm3Only.cv.toFixed(4)} vs plain ${chosenCv.toFixed(4)}: ${rm3Kept ? "kept" : "dropped"}`,
  );
  // Depth: the smallest whose recall on training claims is within 0.005 of the deepest list's.
  const queries = chosenRm3 ? bm25Queries(index, docs, claims, chosenRm3, memo) : plain;
  const deepest = DEPTH_GRID[DEPTH_GRID.length - 1];
  const preds = bm25Predictions(index, docs, claims, queries, deepest);
  const recallAtDepth: Record<number, number> = {};
  for (const d of DEPTH_GRID) recallAtDepth[d] = recallAt(preds, gold, d);
  const depth = DEPTH_GRID.find((d) => recallAtDepth[d] >= recallAtDepth[deepest] - 0.005) ?? deepest;
  log(`${set.name}: recall at depth ${JSON.stringify(recallAtDepth)} -> depth ${depth}`);
  return {
    set: set.name,
    kind,
    claims: claims.length,
    tuning: { ...chosen, depth, rm3: chosenRm3 },
    stockObjective,
    gridBest: params.best,
    gridKept,
    paramsCv: params.cv,
    rm3Cv: rm3Only.cv,
    rm3Kept,
    recallAtDepth,
  };
}

/** Tunes every eval set (one per corpus kind) and writes the tuning file atomically. */
export async function tuneBm25(
  sets: EvalSet[],
  log = (_: string) => {},
  path = BM25_TUNING_PATH,
): Promise<Bm25Tuning> {
  const reports: KindReport[] = [];
  for (const s of sets) reports.push(await tuneSet(s, log));
  const kinds = {} as Record<CorpusKind, KindTuning>;
  for (const r of reports) kinds[r.kind] = r.tuning;
  for (const k of ["sentences", "abstracts"] as const)
    if (!kinds[k]) throw new Error(`no training set of corpus kind ${k} to tune BM25 on`);
  const tuning: Bm25Tuning = {
    schema: 1,
    analyzer: BM25_ANALYZER,
    kinds,
    notes: Object.fromEntries(
      reports.map((r) => [
        r.kind,
        {
          set: r.set,
          trainClaims: r.claims,
          folds: FOLDS,
          objective: "R@5 + nDCG@10 of the BM25 top 10",
          stockObjective: round(r.stockObjective),
          gridBest: r.gridBest,
          gridCrossValidated: round(r.paramsCv),
          gridKept: r.gridKept,
          rm3CrossValidated: round(r.rm3Cv),
          rm3Kept: r.rm3Kept,
          recallAtDepth: Object.fromEntries(Object.entries(r.recallAtDepth).map(([d, v]) => [d, round(v)])),
        },
      ]),
    ),
  };
  await writeFileAtomic(path, `${JSON.stringify(tuning, null, 2)}\n`);
  return tuning;
}

const round = (v: number) => Number(v.toFixed(4));
