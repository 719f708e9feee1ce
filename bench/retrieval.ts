import type { Interval } from "../src/evaluation/bootstrap.ts";
import type { Bm25Index, Bm25Params } from "../src/index/bm25.ts";
import { STOCK_PARAMS } from "../src/index/bm25.ts";
import { corpusKind, settingsFor } from "../src/index/bm25-settings.ts";
import { openEncoders } from "../src/retrieval/encoders.ts";
import { loadEvalSets } from "../src/retrieval/eval-sets.ts";
import {
  columns,
  fitScorer,
  fusionPredictions,
  groups,
  type Metric,
  modelPredictions,
  type Prepared,
  pairedDifference,
  prepare,
  rerankedPredictions,
  scoreWithIntervals,
} from "../src/retrieval/experiment.ts";
import type { FAMILIES } from "../src/retrieval/features.ts";
import { rrfFusion } from "../src/retrieval/fusion.ts";
import { RERANKER_PATH } from "../src/retrieval/load.ts";
import { Reranker } from "../src/retrieval/reranker.ts";
import type { Retriever } from "../src/retrieval/retriever.ts";
import { openEvalSets, withCi } from "../src/retrieval/train.ts";
import { bm25Queries, type CorpusDocs, loadCorpusDocs, memoryIndex } from "../src/retrieval/tune-bm25.ts";
import { PLAIN_ANALYZER } from "../src/text/stem.ts";
import type { Claim, LabelledPair, Task1Prediction } from "../src/types.ts";
import { type BenchSection, percentile, signedInterval, table } from "./report.ts";
import { lunrPeer, type Peer, winkPeer } from "./retrieval-peers.ts";

const HEADER = ["system", "R@2", "R@5", "R@10", "Bpref", "nDCG@10", "ΔR@5 vs BM25"];
type Scores = Record<Metric, Interval>;

function row(name: string, s: Scores, base: Scores): (string | number)[] {
  const d = s.recall_at_5.value - base.recall_at_5.value;
  return [
    name,
    withCi(s.recall_at_2),
    withCi(s.recall_at_5),
    withCi(s.recall_at_10),
    withCi(s.bpref),
    withCi(s.ndcg_at_10),
    `${d >= 0 ? "+" : ""}${d.toFixed(3)}`,
  ];
}

/** Dev figures the targets are checked against, per set. */
interface SetFigures {
  newBm25: Scores;
  peers: Scores[];
  /** The stock peers' dev predictions, for paired differences. */
  peerPreds: { name: string; preds: Task1Prediction[] }[];
  reranked?: Scores;
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));

/** Times each claim's top-10 search; returns predictions and per-query milliseconds. */
function timed(
  claims: Claim[],
  search: (text: string) => string[],
): { preds: Task1Prediction[]; times: number[] } {
  const preds: Task1Prediction[] = [];
  const times: number[] = [];
  for (const c of claims.slice(0, 20)) search(c.text); // warm-up
  for (const c of claims) {
    const t = performance.now();
    const ids = search(c.text);
    times.push(performance.now() - t);
    ids.forEach((abstractId, r) => {
      preds.push({ claimId: c.id, abstractId, rank: r + 1 });
    });
  }
  return { preds, times };
}

/** BM25 systems and peers on one set's dev claims: quality with intervals, build time and query latency. */
export async function firstStage(
  name: string,
  docs: CorpusDocs,
  dev: Claim[],
  gold: LabelledPair[],
): Promise<{ markdown: string; figures: SetFigures; newP50: number }> {
  const settings = settingsFor(corpusKind(docs.ids.length, docs.sentences));
  const tuned: Bm25Params = { k1: settings.k1, b: settings.b, titleWeight: settings.titleWeight };
  const devIds = new Set(dev.map((c) => c.id));
  const devGold = gold.filter((g) => devIds.has(g.claimId));
  const ours = async (analyzer: Parameters<typeof memoryIndex>[1], params: Bm25Params) => {
    const t = performance.now();
    const index = await memoryIndex(docs, analyzer);
    index.setParams(params);
    return { index, buildMs: performance.now() - t };
  };
  const search = (index: Bm25Index, rm3?: Parameters<typeof bm25Queries>[3]) => {
    const memo = new Map<number, string[]>();
    return (text: string) => {
      const [q] = bm25Queries(index, docs, [{ id: "", text }], rm3, memo);
      return index.search(q, 10).map((h) => docs.ids[h.docno]);
    };
  };
  const systems: {
    name: string;
    buildMs: number;
    search: (text: string) => string[];
    kind: "ours" | "new" | "peer" | "ablation";
  }[] = [];
  const old = await ours(PLAIN_ANALYZER, STOCK_PARAMS);
  systems.push({
    name: "our old BM25 (schema 2: no stemming, k1 1.2, b 0.75, title weight 1)",
    kind: "ours",
    buildMs: old.buildMs,
    search: search(old.index),
  });
  const neu = await ours(undefined, tuned);
  systems.push({
    name: `**new BM25** (Porter2 + stop list; k1 ${settings.k1}, b ${settings.b}, title weight ${settings.titleWeight}${settings.rm3 ? ", RM3" : ""})`,
    kind: "new",
    buildMs: neu.buildMs,
    search: search(neu.index, settings.rm3),
  });
  const stockNew = await ours(undefined, STOCK_PARAMS);
  systems.push({
    name: "new BM25 with stock k1 1.2, b 0.75, title weight 1 (no tuning)",
    kind: "ablation",
    buildMs: stockNew.buildMs,
    search: search(stockNew.index),
  });
  const unstemmed = await ours(PLAIN_ANALYZER, tuned);
  systems.push({
    name: "new BM25 without stemming and stop list (old analysis, new parameters)",
    kind: "ablation",
    buildMs: unstemmed.buildMs,
    search: search(unstemmed.index),
  });
  const rm3 = { docs: 3, terms: 25, originalWeight: 0.85 };
  if (!settings.rm3)
    systems.push({
      name: `new BM25 + RM3 ${JSON.stringify(rm3)} (best on training claims; not kept)`,
      kind: "ablation",
      buildMs: neu.buildMs,
      search: search(neu.index, rm3),
    });
  const peers: [string, (d: CorpusDocs) => Peer][] = [
    ["wink", winkPeer],
    ["lunr", lunrPeer],
  ];
  for (const [, make] of peers) {
    const t = performance.now();
    const peer = make(docs);
    const buildMs = performance.now() - t;
    systems.push({
      name: peer.name,
      kind: "peer",
      buildMs,
      search: (text) => peer.search(text, 10).map((d) => docs.ids[d]),
    });
  }
  const results = systems.map((s) => ({ ...s, ...timed(dev, s.search) }));
  const scores = results.map((r) => scoreWithIntervals(r.preds, devGold));
  const newAt = results.findIndex((r) => r.kind === "new");
  const newP50 = percentile(results[newAt].times, 50);
  const rows = results.map((r, i) => {
    const p50 = percentile(r.times, 50);
    return [
      ...row(r.name, scores[i], scores[newAt]),
      `${(r.buildMs / 1000).toFixed(2)} s`,
      `${ms(p50)} ms`,
      `${ms(percentile(r.times, 95))} ms`,
      `${(p50 / newP50).toFixed(1)}×`,
    ];
  });
  const header = [
    ...HEADER.slice(0, -1),
    "ΔR@5 vs new BM25",
    "index build",
    "query p50",
    "query p95",
    "p50 / new BM25's",
  ];
  return {
    markdown: `### ${name} dev, first stage alone: ${dev.length} claims, ${docs.ids.length} abstracts (${settings.kind})\n\n${table(header, rows)}`,
    figures: {
      newBm25: scores[newAt],
      peers: scores.filter((_, i) => results[i].kind === "peer"),
      peerPreds: results.filter((r) => r.kind === "peer").map((r) => ({ name: r.name, preds: r.preds })),
    },
    newP50,
  };
}

export async function bench(): Promise<BenchSection> {
  // SciFact and Climate-FEVER are not the built-in corpus: the shipped re-ranker uses its stand-in weights there.
  const model = Reranker.load(RERANKER_PATH).forCorpus(false);
  const parts: string[] = [];
  const figures = new Map<string, SetFigures>();
  let bm25P50 = 0;
  for (const s of await loadEvalSets()) {
    console.error(`${s.name}: first-stage systems`);
    const f = await firstStage(s.name, await loadCorpusDocs(s), s.dev, s.gold);
    parts.push(f.markdown);
    figures.set(s.name, f.figures);
    if (s.name === "scifact") bm25P50 = f.newP50;
  }
  const enc = await openEncoders({ workers: 2 });
  const sets = await openEvalSets(enc, undefined, (m) => console.error(m));
  const paired: string[][] = [];
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
    const l2 = model.json.l2;
    const scorers = variants.map((v) => {
      const cols = columns(train[0], v.families, vectorSets);
      return {
        ...v,
        cols,
        scorer: fitScorer(
          train.flatMap((p) => groups(p, cols)),
          l2,
        ).scorer,
      };
    });
    sets.forEach((s, i) => {
      const p = dev[i];
      const r = s.retriever;
      const sc = (preds: Task1Prediction[]) => scoreWithIntervals(preds, p.gold);
      const bm25 = sc(fusionPredictions(p, r, { bm25: 1, dense: {} }));
      const rows = [row("new BM25 (same index)", bm25, bm25)];
      for (const v of vectorSets)
        rows.push(row(`${v} alone`, sc(fusionPredictions(p, r, { bm25: 0, dense: { [v]: 1 } })), bm25));
      rows.push(row("RRF (BM25 + dense)", sc(rrfPredictions(p, r)), bm25));
      rows.push(
        row(`linear fusion ${JSON.stringify(fusion.dense)}`, sc(fusionPredictions(p, r, fusion)), bm25),
      );
      const shippedPreds = modelPredictions(p, r, model);
      const reranked = sc(shippedPreds);
      const f = figures.get(s.set.name);
      if (f) f.reranked = reranked;
      const bm25Preds = fusionPredictions(p, r, { bm25: 1, dense: {} });
      paired.push(
        ...[{ name: "new BM25 (same index)", preds: bm25Preds }, ...(f?.peerPreds ?? [])].map((b) => [
          s.set.name,
          `shipped pipeline − ${b.name}`,
          ...(["recall_at_5", "ndcg_at_10"] as const).map((m) =>
            signedInterval(pairedDifference(shippedPreds, b.preds, p.gold, m)),
          ),
        ]),
      );
      rows.push(row("**re-ranked pipeline (shipped)**", reranked, bm25));
      for (const v of scorers) rows.push(row(v.name, sc(rerankedPredictions(p, r, v.scorer, v.cols)), bm25));
      parts.push(
        `### ${s.set.name} dev, whole pipeline: ${s.set.dev.length} claims (${p.claims.filter((c) => c.relevant.some(Boolean)).length} with a relevant abstract in the top ${depth}), ${s.retriever.index.docs.size} abstracts\n\n${table(HEADER, rows)}`,
      );
    });
    parts.push(
      `### Gains of the shipped pipeline, paired\n\nMean per-claim difference on the dev claims, with a paired bootstrap 95% interval (1,000 resamples of the claims, the same claims drawn for both systems); the peers are stock stemmed BM25 libraries run on the same corpus and claims (first table of each set).\n\n${table(["set", "comparison", "ΔR@5 (95% CI)", "ΔnDCG@10 (95% CI)"], paired)}`,
    );
    parts.push(targets(figures, bm25P50));
  } finally {
    for (const s of sets) s.close();
    await enc.close();
  }
  return {
    id: "retrieval",
    title: "Abstract retrieval (task 1.1): old and new BM25, peers, dense, fusion, re-ranker and ablations",
    command: "npm run bench -- retrieval",
    markdown: `Intervals: bootstrap 95% over dev claims (1,000 resamples, src/evaluation/bootstrap.ts). Every setting was chosen on training claims; dev is read here only.\n\n${parts.join("\n\n")}`,
  };
}

/** The targets, each with the figures it is judged on. */
function targets(figures: Map<string, SetFigures>, bm25P50: number): string {
  const rows: string[][] = [];
  const yes = (ok: boolean) => (ok ? "met" : "**not met**");
  for (const [name, f] of figures) {
    for (const m of ["recall_at_5", "ndcg_at_10"] as const) {
      const best = Math.max(...f.peers.map((p) => p[m].value));
      rows.push([
        `${name}: new BM25 ${m === "recall_at_5" ? "R@5" : "nDCG@10"} ≥ best peer`,
        `${f.newBm25[m].value.toFixed(3)} vs ${best.toFixed(3)}`,
        yes(f.newBm25[m].value >= best),
      ]);
    }
    if (!f.reranked) continue;
    const d5 = f.reranked.recall_at_5.value - f.newBm25.recall_at_5.value;
    if (name === "climate-fever")
      rows.push([
        `${name}: re-ranked R@5 ≥ new BM25 + 0.06`,
        `${d5 >= 0 ? "+" : ""}${d5.toFixed(3)}`,
        yes(d5 >= 0.06),
      ]);
    else {
      const dn = f.reranked.ndcg_at_10.value - f.newBm25.ndcg_at_10.value;
      rows.push([
        `${name}: re-ranked R@5 and nDCG@10 above new BM25`,
        `R@5 ${d5 >= 0 ? "+" : ""}${d5.toFixed(3)}, nDCG@10 ${dn >= 0 ? "+" : ""}${dn.toFixed(3)}`,
        yes(d5 > 0 && dn > 0),
      ]);
    }
  }
  rows.push(["BM25 query p50 < 5 ms (SciFact, 5k abstracts)", `${ms(bm25P50)} ms`, yes(bm25P50 < 5)]);
  return `### Targets of issue 14\n\n${table(["target", "measured", ""], rows)}\n\nThe targets compare point estimates; the paired intervals above say which gains are beyond resampling noise (an interval above 0). One claim's latency and ingest speed: section "retrieval-speed"; retrieval at 400,000 abstracts: section "retrieval-scale".`;
}

function rrfPredictions(p: Prepared, r: Retriever): Task1Prediction[] {
  // RRF scores replace the fused scores; the ordering logic is scoreReranked's with an empty head.
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
  return rerankedPredictions(fake, r, () => 0, []);
}
