/**
 * Task 1.1 retrieval on our dev splits (SciFact, Climate-FEVER): plain BM25 against each dense encoder alone, the
 * fusions and the shipped re-ranker, plus the re-ranker retrained without each feature family; then the speed
 * of one claim's retrieval and of ingest without vectors. All figures through src/evaluation/metrics.ts.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { homeDir } from "../src/data/paths.ts";
import type { RetrievalScores } from "../src/evaluation/metrics.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { openEncoders } from "../src/retrieval/encoders.ts";
import { evalIndexDir, loadEvalSets } from "../src/retrieval/eval-sets.ts";
import {
  columns,
  fitScorer,
  groups,
  type Prepared,
  prepare,
  scoreFusion,
  scoreModel,
  scoreReranked,
} from "../src/retrieval/experiment.ts";
import type { FAMILIES } from "../src/retrieval/features.ts";
import { rrfFusion } from "../src/retrieval/fusion.ts";
import { RERANKER_PATH } from "../src/retrieval/load.ts";
import { Reranker } from "../src/retrieval/reranker.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { openEvalSets } from "../src/retrieval/train.ts";
import { type BenchSection, loadAverage, percentile, table } from "./report.ts";

const HEADER = ["system", "R@2", "R@5", "R@10", "Bpref", "Score 1.1", "nDCG@10", "ΔR@5 vs BM25"];

function row(name: string, s: RetrievalScores, base: RetrievalScores): (string | number)[] {
  const d = s.recall_at_5 - base.recall_at_5;
  return [
    name,
    s.recall_at_2,
    s.recall_at_5,
    s.recall_at_10,
    s.bpref,
    s.score_1_1,
    s.ndcg_at_10,
    `${d >= 0 ? "+" : ""}${d.toFixed(3)}`,
  ];
}

export async function bench(): Promise<BenchSection> {
  const model = Reranker.load(RERANKER_PATH);
  // Latency first, in a process without the worker pool (with the pool open, the in-process model's first
  // embed never settled here).
  const speed = await latency(model);
  const enc = await openEncoders({ workers: 2 });
  const sets = await openEvalSets(enc, undefined, (m) => console.error(m));
  const parts: string[] = [];
  try {
    const vectorSets = sets[0].retriever.vectorSets;
    const withWords = enc.words !== undefined;
    const fusion = model.json.fusion;
    const depth = model.json.rerankDepth;
    const train: Prepared[] = [];
    const dev: Prepared[] = [];
    for (const s of sets) {
      console.error(`${s.set.name}: stage 1 and features of ${s.set.train.length} train claims`);
      train.push(await prepare(s.retriever, s.set.train, s.set.gold, fusion, depth, withWords));
      console.error(`${s.set.name}: stage 1 and features of ${s.set.dev.length} dev claims`);
      dev.push(await prepare(s.retriever, s.set.dev, s.set.gold, fusion, depth, withWords));
    }
    // Ablations: the same training procedure as the shipped model, one family left out at a time.
    const variants: { name: string; families: (typeof FAMILIES)[number][] }[] = [
      { name: "re-ranker, lexical family only", families: ["lexical"] },
      ...dev[0].families.map((f) => ({
        name: `re-ranker without ${f}`,
        families: dev[0].families.filter((x) => x !== f),
      })),
    ];
    console.error(`training ${variants.length} ablation variants`);
    const scorers = variants.map((v) => {
      const cols = columns(train[0], v.families, vectorSets);
      return { ...v, cols, scorer: fitScorer(train.flatMap((p) => groups(p, cols))).scorer };
    });
    sets.forEach((s, i) => {
      const p = dev[i];
      const r = s.retriever;
      const bm25 = scoreFusion(p, r, { bm25: 1, dense: {} });
      const rows = [row("BM25 (same index)", bm25, bm25)];
      for (const v of vectorSets)
        rows.push(row(`${v} alone`, scoreFusion(p, r, { bm25: 0, dense: { [v]: 1 } }), bm25));
      rows.push(row("RRF (BM25 + dense)", scoreRrf(p, r), bm25));
      rows.push(row(`linear fusion ${JSON.stringify(fusion.dense)}`, scoreFusion(p, r, fusion), bm25));
      rows.push(row("**re-ranker (shipped)**", scoreModel(p, r, model), bm25));
      for (const v of scorers) rows.push(row(v.name, scoreReranked(p, r, v.scorer, v.cols), bm25));
      parts.push(
        `### ${s.set.name} dev: ${s.set.dev.length} claims (${p.claims.filter((c) => c.relevant.some(Boolean)).length} with a relevant abstract in the top ${depth}), ${s.retriever.index.docs.size} abstracts\n\n${table(HEADER, rows)}`,
      );
    });

    parts.push(speed);
  } finally {
    for (const s of sets) s.close();
    await enc.close();
  }
  return {
    id: "retrieval",
    title: "Abstract retrieval (task 1.1): BM25, dense, fusion, re-ranker and ablations",
    command: "npm run bench -- retrieval",
    markdown: parts.join("\n\n"),
  };
}

/** p50/p95 of one claim (cold claim embedding, candidates, re-ranking) on the SciFact index after warm-up. */
async function latency(model: Reranker): Promise<string> {
  const cold = await openEncoders({ workers: 0, cache: false });
  const set = (await loadEvalSets()).find((s) => s.name === "scifact");
  if (!set) throw new Error("no SciFact set");
  const index = openIndex(evalIndexDir("scifact"));
  try {
    const r = new Retriever(index, { encoders: cold.encoders, words: cold.words, reranker: model });
    const claims = set.dev.map((c) => c.text);
    for (const c of claims.slice(0, 20)) await r.retrieve(c);
    const times: number[] = [];
    for (const c of claims.slice(20, 220)) {
      const t = performance.now();
      await r.retrieve(c, 10);
      times.push(performance.now() - t);
    }
    return `### Speed\n\n${table(
      ["measure", "value"],
      [
        [
          `one claim on SciFact (${index.docs.size} abstracts), p50`,
          `${percentile(times, 50).toFixed(1)} ms`,
        ],
        [
          `one claim, p95 (${times.length} dev claims after 20 warm-up)`,
          `${percentile(times, 95).toFixed(1)} ms`,
        ],
        ["ingest SciFact without vectors", await ingestRate(set.corpus)],
        // Other jobs share the 2 cores; above 2 these timings had less than the whole machine.
        ["load average (1, 5, 15 min) after these timings", loadAverage()],
      ],
    )}\n\nOne claim = claim embedding (USE-lite in-process, no vector cache) + BM25 top ${model.json.depth.bm25} + dense top ${model.json.depth.dense} + features and re-ranking of the top ${model.json.rerankDepth}.`;
  } finally {
    index.close();
    await cold.close();
  }
}

function scoreRrf(p: Prepared, r: Retriever): RetrievalScores {
  // RRF scores replace the fused scores; the ordering logic is scoreFusion's, with weights that reproduce RRF.
  const orders = p.claims.map(({ stage }) => {
    const s = rrfFusion(stage.cands);
    return stage.cands
      .map((_, i) => i)
      .sort((a, b) => s[b] - s[a] || stage.cands[a].docno - stage.cands[b].docno);
  });
  const fake = {
    ...p,
    claims: p.claims.map((c, i) => ({ ...c, rows: [], x: [], stage: { ...c.stage, order: orders[i] } })),
  };
  return scoreReranked(fake, r, () => 0, []);
}

async function ingestRate(corpus: string): Promise<string> {
  const dir = join(homeDir(), "bench-tmp", "ingest-novec");
  // Twice: the first run in a process includes compiling the ingest code, which a 5k corpus does not amortise.
  const runs: string[] = [];
  for (const label of ["first run", "second run"]) {
    rmSync(dir, { recursive: true, force: true });
    const t = performance.now();
    const r = await ingest(corpus, dir);
    const s = (performance.now() - t) / 1000;
    runs.push(`${label} ${r.total} abstracts in ${s.toFixed(2)} s = ${(r.total / s).toFixed(0)} abstracts/s`);
  }
  rmSync(dir, { recursive: true, force: true });
  return runs.join("; ");
}
