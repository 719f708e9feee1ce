/**
 * `climatecheck train retrieval`: builds (or reuses) the SciFact and Climate-FEVER eval indexes, tunes the
 * stage 1 fusion weights on the training claims, learns the pairwise re-ranker on them and writes
 * models/retrieval/reranker.json with the dev figures. Deterministic: same data, same model.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { MODELS_DIR } from "../data/paths.ts";
import type { RetrievalScores } from "../evaluation/metrics.ts";
import { ingest } from "../index/ingest.ts";
import { openIndex } from "../index/open.ts";
import { DEFAULT_DEPTH } from "./candidates.ts";
import { type EncoderSet, openEncoders } from "./encoders.ts";
import { type EvalSet, evalIndexDir, loadEvalSets } from "./eval-sets.ts";
import { columns, fitScorer, groups, type Prepared, prepare, scoreFusion, scoreModel } from "./experiment.ts";
import type { FusionWeights } from "./fusion.ts";
import { RERANKER_SCHEMA, Reranker } from "./reranker.ts";
import { Retriever, type Stage1 } from "./retriever.ts";

export const RERANK_DEPTH = 100;
const GRID = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1];

export interface TrainRetrievalOptions {
  dataDir?: string;
  outDir?: string;
  log?: (msg: string) => void;
}

export interface SetContext {
  set: EvalSet;
  retriever: Retriever;
  close(): void;
}

/** Builds (idempotently) and opens the index of each eval set with the default encoders. */
export async function openEvalSets(
  enc: EncoderSet,
  dataDir?: string,
  log = (_: string) => {},
): Promise<SetContext[]> {
  const out: SetContext[] = [];
  for (const set of await loadEvalSets(dataDir)) {
    const dir = evalIndexDir(set.name);
    const started = Date.now();
    const r = await ingest(set.corpus, dir, { format: set.format, vectors: enc.specs });
    log(
      `${set.name}: index ${dir} (${r.total} abstracts, ${r.added} new, ${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
    const index = openIndex(dir);
    out.push({
      set,
      retriever: new Retriever(index, { encoders: enc.encoders, words: enc.words }),
      close: () => index.close(),
    });
  }
  return out;
}

/** The objective of every choice: R@5 + nDCG@10 averaged over the data sets. */
export const objective = (scores: RetrievalScores[]): number =>
  scores.reduce((s, x) => s + x.recall_at_5 + x.ndcg_at_10, 0) / scores.length;

/** Grid search of the dense weights (BM25 weight 1) on training claims. */
export function tuneFusion(
  prepared: { p: Prepared; retriever: Retriever }[],
  vectorSets: string[],
): FusionWeights {
  let best: { w: FusionWeights; score: number } | undefined;
  const combos: Record<string, number>[] = [{}];
  for (const v of vectorSets) {
    const next: Record<string, number>[] = [];
    for (const c of combos) for (const g of GRID) next.push({ ...c, [v]: g });
    combos.splice(0, combos.length, ...next);
  }
  for (const dense of combos) {
    const w = { bm25: 1, dense };
    const score = objective(prepared.map(({ p, retriever }) => scoreFusion(p, retriever, w)));
    if (!best || score > best.score + 1e-9) best = { w, score };
  }
  return best?.w ?? { bm25: 1, dense: {} };
}

export async function trainRetrieval(options: TrainRetrievalOptions = {}): Promise<Reranker> {
  const log = options.log ?? (() => {});
  const enc = await openEncoders({ workers: 2 });
  const sets = await openEvalSets(enc, options.dataDir, log);
  try {
    const vectorSets = sets[0].retriever.vectorSets;
    const withWords = enc.words !== undefined;
    // Stage 1 once per claim; fusion and features are recomputed from it.
    const stages: Stage1[][] = [];
    const trainP: Prepared[] = [];
    for (const s of sets) {
      const st = await s.retriever.stage1(s.set.train.map((c) => c.text));
      stages.push(st);
      trainP.push(
        await prepare(s.retriever, s.set.train, s.set.gold, { bm25: 1, dense: {} }, 0, withWords, st),
      );
    }
    const fusion = tuneFusion(
      trainP.map((p, i) => ({ p, retriever: sets[i].retriever })),
      vectorSets,
    );
    log(`fusion weights: ${JSON.stringify(fusion)}`);
    const train = await Promise.all(
      sets.map((s, i) =>
        prepare(s.retriever, s.set.train, s.set.gold, fusion, RERANK_DEPTH, withWords, stages[i]),
      ),
    );
    const cols = columns(train[0], train[0].families, vectorSets);
    const { fit } = fitScorer(train.flatMap((p) => groups(p, cols)));
    const reranker = new Reranker({
      schema: RERANKER_SCHEMA,
      families: train[0].families,
      vectorSets: Object.fromEntries(
        vectorSets.map((v) => [v, sets[0].retriever.index.manifest.vectors[v].encoder]),
      ),
      names: train[0].names,
      standardiser: {
        mean: fit.standardiser.mean.map((v) => Number(v.toPrecision(6))),
        std: fit.standardiser.std.map((v) => Number(v.toPrecision(6))),
      },
      model: fit.model.toJSON(),
      fusion,
      depth: DEFAULT_DEPTH,
      rerankDepth: RERANK_DEPTH,
    });
    for (const s of sets) {
      const dev = await prepare(s.retriever, s.set.dev, s.set.gold, fusion, RERANK_DEPTH, withWords);
      const bm25 = scoreFusion(dev, s.retriever, { bm25: 1, dense: {} });
      const fused = scoreFusion(dev, s.retriever, fusion);
      const rr = scoreModel(dev, s.retriever, reranker);
      const f = (x: RetrievalScores) => `R@5 ${x.recall_at_5.toFixed(3)} nDCG@10 ${x.ndcg_at_10.toFixed(3)}`;
      log(
        `${s.set.name} dev (${s.set.dev.length} claims): BM25 ${f(bm25)} | fusion ${f(fused)} | re-ranked ${f(rr)}`,
      );
    }
    const outDir = options.outDir ?? join(MODELS_DIR, "retrieval");
    await mkdir(outDir, { recursive: true });
    await reranker.save(join(outDir, "reranker.json"));
    log(`wrote ${join(outDir, "reranker.json")}`);
    return reranker;
  } finally {
    for (const s of sets) s.close();
    await enc.close();
  }
}
