/**
 * `climatecheck-train retrieval`: builds (or reuses) the SciFact and Climate-FEVER eval indexes, tunes the
 * stage 1 fusion weights on the training claims, learns the pairwise re-ranker on them and writes
 * models/retrieval/reranker.json with the dev figures. Deterministic: same data, same model.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { MODELS_DIR } from "../data/paths.ts";
import { writeFileAtomic } from "../data/tables.ts";
import type { Interval } from "../evaluation/bootstrap.ts";
import type { RetrievalScores } from "../evaluation/metrics.ts";
import type { Bm25Tuning } from "../index/bm25-settings.ts";
import { ingest } from "../index/ingest.ts";
import { openIndex } from "../index/open.ts";
import { hasOtherSchema } from "../index/schema.ts";
import { DEFAULT_DEPTH } from "./candidates.ts";
import { type EncoderSet, openEncoders } from "./encoders.ts";
import { type EvalSet, evalIndexDir, loadEvalSets } from "./eval-sets.ts";
import {
  columns,
  fitScorer,
  foldPrepared,
  fusionPredictions,
  groups,
  METRICS,
  type Metric,
  modelPredictions,
  type Prepared,
  prepare,
  scoreFusion,
  scoreReranked,
  scoreWithIntervals,
  truncatePrepared,
} from "./experiment.ts";
import type { FusionWeights } from "./fusion.ts";
import { RERANKER_SCHEMA, Reranker } from "./reranker.ts";
import { Retriever, type Stage1 } from "./retriever.ts";
import { tuneBm25 } from "./tune-bm25.ts";

/** Re-ranked head sizes tried (cross-validated on training claims); features are computed for the largest. */
export const RERANK_DEPTHS = [50, 100];
export const RERANK_DEPTH = Math.max(...RERANK_DEPTHS);
const CV_FOLDS = 3;
const GRID = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1];
const L2_GRID = [1e-3, 1e-2, 1e-1, 1];

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
    // Derived from the training data: one built by an older version is rebuilt.
    if (hasOtherSchema(dir)) rmSync(dir, { recursive: true, force: true });
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

interface DevFigures {
  set: string;
  claims: number;
  docs: number;
  bm25: Record<Metric, Interval>;
  fused: Record<Metric, Interval>;
  reranked: Record<Metric, Interval>;
}

/** "0.512 (0.47-0.55)": a figure with its bootstrap 95% interval. */
export const withCi = (i: Interval): string =>
  `${i.value.toFixed(3)} (${i.low.toFixed(2)}-${i.high.toFixed(2)})`;

function card(
  r: Reranker,
  l2: number,
  figures: DevFigures[],
  sets: SetContext[],
  tuning: Bm25Tuning,
  cvLog: string[],
): string {
  const j = r.json;
  const rows = figures.flatMap((f) =>
    (
      [
        ["BM25 (new first stage)", f.bm25],
        ["fusion", f.fused],
        ["re-ranker", f.reranked],
      ] as const
    ).map(
      ([name, s]) =>
        `| ${f.set} (${f.claims} claims, ${f.docs} abstracts) | ${name} | ${METRICS.map((m) => withCi(s[m])).join(" | ")} |`,
    ),
  );
  const kinds = Object.entries(tuning.kinds)
    .map(
      ([k, t]) =>
        `- ${k}: k1 ${t.k1}, b ${t.b}, title weight ${t.titleWeight}, BM25 depth ${t.depth}, RM3 ${t.rm3 ? JSON.stringify(t.rm3) : "off"}; cross-validation: \`${JSON.stringify(tuning.notes[k])}\``,
    )
    .join("\n");
  const vectors = sets[0].retriever.index.manifest.vectors;
  return `# Retrieval re-ranker (task 1.1)

Written by \`climatecheck-train retrieval\` (deterministic; rerun it to rebuild \`reranker.json\` and this card).

## Data
- SciFact \`claims_train\` over the full 5,183-abstract corpus: evidence abstracts relevant, cited abstracts without evidence judged non-relevant.
- Climate-FEVER dev: every distinct evidence sentence of all claims is the corpus (one-sentence abstracts titled by their Wikipedia article); SUPPORTS/REFUTES sentences relevant, NOT_ENOUGH_INFO judged non-relevant.
- Split by claim id (sha1, \`hashSplit(id, 0.3, "retrieval:<set>")\`): 70 % train, 30 % dev. Figures below are dev; nothing here was tuned on dev.

## Method
1. Candidates: BM25 (own index: project tokenizer, then a stop list and Porter2 stems; BM25F-style title + abstract) top N (N per corpus kind, below) and, per vector set, exhaustive dense top ${j.depth.dense}; every candidate gets every signal.
2. Fusion: min-max normalised BM25 + ${JSON.stringify(j.fusion.dense)} × normalised cosine; weights from a grid search on the training claims (objective: mean over the two sets of R@5 + nDCG@10).
3. Re-ranking of the top ${j.rerankDepth} fused candidates by a linear scorer over ${j.names.length} standardised features (families: ${j.families.join(", ")}), learnt pairwise (logistic loss on feature differences of a relevant and a non-relevant candidate of the same claim; 10 hardest + 10 random negatives per positive; each data set weighs the same). L2 ${l2} and the head size ${j.rerankDepth} chosen by ${CV_FOLDS}-fold cross-validation on the training claims:
${cvLog.map((l) => `   - ${l}`).join("\n")}

## BM25 first stage (models/retrieval/bm25.json, recorded in each index manifest)
Chosen per corpus kind on the training claims only (\`climatecheck-train retrieval\`, src/retrieval/tune-bm25.ts): k1, b and the title weight over a grid by 5-fold cross-validation (the grid's choice ships only if it beats k1 1.2, b 0.75, title weight 1 on held-out folds), then RM3 feedback (kept only if it beats plain BM25 cross-validated), then the smallest candidate depth within 0.005 of the recall at 1,000.
${kinds}

Features: ${j.names.join(", ")}.

## How an abstract is embedded, and why
${Object.entries(vectors)
  .map(([name, v]) => `- \`${name}\`: ${v.encoder}, ${v.dim}-d, text = \`${v.text}\`.`)
  .join("\n")}
- USE-lite costs time in proportion to text length (about 35 texts/s at 110 characters and 10/s at 1,500 on one idle thread; 12-13 texts/s at 100-120 characters measured here on a machine shared by five jobs) and reads at most 128 tokens, so it embeds the title and the start of the abstract, cut at a word boundary near 200 characters: the topic is in the title and the first sentence, and a full abstract would cost 3-4 times as much for words the model never reads well. The lexical side sees the whole abstract.

## Dev figures (official scorer, src/evaluation/metrics.ts; bootstrap 95% intervals over claims, 1,000 resamples)

Read once, after every choice above was made on training claims.

| set | system | R@2 | R@5 | R@10 | Bpref | nDCG@10 |
| --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Ablations: BENCHMARKS.md, section "retrieval"; speed: sections "retrieval-speed" (one claim on 5k abstracts, ingest) and "retrieval-scale" (400,000 abstracts).

## Retrain
\`climatecheck-train retrieval\` (or \`npm run train -- retrieval\`): tunes BM25 per corpus kind (writes \`bm25.json\`), builds or reuses the two eval indexes under \`$CLIMATECHECK_HOME/eval-index/\` (resumable; their BM25 files are rewritten with the new settings), tunes the fusion, fits the re-ranker, writes this folder. Then \`climatecheck-train ranking\` adds the scorer learnt on our judged pairs (section above; it reads the default index).
`;
}

export async function trainRetrieval(options: TrainRetrievalOptions = {}): Promise<Reranker> {
  const log = options.log ?? (() => {});
  // BM25 first: the eval indexes take its settings when they are (re)finalised below.
  const tuning = await tuneBm25(await loadEvalSets(options.dataDir), log);
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
    // L2 strength and head size by k-fold cross-validation on the training claims, then a refit on all of them.
    let l2 = L2_GRID[0];
    let rerankDepth = RERANK_DEPTH;
    let bestScore = Number.NEGATIVE_INFINITY;
    const cvLog: string[] = [];
    const folds = Array.from({ length: CV_FOLDS }, (_, f) =>
      train.map((p) => foldPrepared(p, CV_FOLDS, f, "retrieval-cv")),
    );
    for (const depth of RERANK_DEPTHS) {
      for (const candidate of L2_GRID) {
        let score = 0;
        for (const fold of folds) {
          const { scorer } = fitScorer(
            fold.flatMap(([fit]) => groups(truncatePrepared(fit, depth), cols)),
            candidate,
          );
          score +=
            objective(
              fold.map(([, held], i) =>
                scoreReranked(truncatePrepared(held, depth), sets[i].retriever, scorer, cols),
              ),
            ) / CV_FOLDS;
        }
        const line = `head ${depth}, l2 ${candidate}: cross-validated objective (R@5 + nDCG@10) ${score.toFixed(4)}`;
        log(line);
        cvLog.push(line);
        if (score > bestScore + 1e-9) {
          bestScore = score;
          l2 = candidate;
          rerankDepth = depth;
        }
      }
    }
    const { fit } = fitScorer(
      train.flatMap((p) => groups(truncatePrepared(p, rerankDepth), cols)),
      l2,
    );
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
      rerankDepth,
      l2,
    });
    const figures: DevFigures[] = [];
    for (const s of sets) {
      const dev = await prepare(s.retriever, s.set.dev, s.set.gold, fusion, RERANK_DEPTH, withWords);
      const bm25 = scoreWithIntervals(fusionPredictions(dev, s.retriever, { bm25: 1, dense: {} }), dev.gold);
      const fused = scoreWithIntervals(fusionPredictions(dev, s.retriever, fusion), dev.gold);
      const rr = scoreWithIntervals(modelPredictions(dev, s.retriever, reranker), dev.gold);
      const f = (x: Record<Metric, Interval>) =>
        `R@5 ${withCi(x.recall_at_5)} nDCG@10 ${withCi(x.ndcg_at_10)}`;
      log(
        `${s.set.name} dev (${s.set.dev.length} claims): BM25 ${f(bm25)} | fusion ${f(fused)} | re-ranked ${f(rr)}`,
      );
      figures.push({
        set: s.set.name,
        claims: dev.claims.length,
        docs: s.retriever.index.docs.size,
        bm25,
        fused,
        reranked: rr,
      });
    }
    const outDir = options.outDir ?? join(MODELS_DIR, "retrieval");
    await reranker.save(join(outDir, "reranker.json"));
    await writeFileAtomic(join(outDir, "CARD.md"), card(reranker, l2, figures, sets, tuning, cvLog));
    log(`wrote ${join(outDir, "reranker.json")} and CARD.md`);
    return reranker;
  } finally {
    for (const s of sets) s.close();
    await enc.close();
  }
}
