/**
 * Bring your own models: per-stage cost of the profile backends with the tiny random-weight models of
 * bench/fixtures/tiny-models.ts (16-d embedding, one-row cross-encoder and NLI), over the built-in corpus (4,330
 * arXiv abstracts) and 200 Climate-FEVER + SciFact claims. The tiny models cost almost nothing, so these figures are
 * the fixed cost of our side (tokenising, batching, pooling, fusion, the chat client and its JSON checks): add
 * your model's own forward time per text to project a real one. Last, the built-in path with nothing configured:
 * the ranking step as main has it (rank) against this branch's (rankAll), on the same stage-1 results.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { ingest } from "../src/index/ingest.ts";
import { openChatNarratives } from "../src/narratives/chat.ts";
import { ensureDefaultIndex } from "../src/pipeline/default-index.ts";
import { openByoRetrieval, type RetrievalConfig } from "../src/retrieval/byo.ts";
import { openRetriever } from "../src/retrieval/load.ts";
import { openOnnxVerifier } from "../src/verification/backends/onnx.ts";
import { startChatServer } from "../test/chat-server-fixture.ts";
import { writeTinyModels } from "./fixtures/tiny-models.ts";
import { benchClaims } from "./predict.ts";
import { type Bench, loadAverage, table } from "./report.ts";

const CLAIMS = 200;
const TOP_N = 50;
const log = (m: string) => process.stderr.write(`  ${m}\n`);

/** Best of `reps` timings of `f`, in ms. */
async function best(reps: number, f: () => Promise<unknown>): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await f();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

export const bench: Bench = async () => {
  const tmp = await mkdtemp(join(tmpdir(), "bench-byo-"));
  try {
    const models = writeTinyModels(join(tmp, "models"));
    const claims = (await benchClaims(CLAIMS)).map((c) => c.text);
    const dense = {
      modelDir: models.embedding,
      queryPrefix: "query: ",
      passagePrefix: "passage: ",
      maxLength: 512,
    };
    const rows: (string | number)[][] = [];
    const n = BUILTIN_CORPUS.abstracts;

    log("ingest: BM25 alone, then BM25 + the dense model");
    const plain = join(tmp, "plain");
    const tPlain = await best(1, () => ingest(BUILTIN_CORPUS.path, plain, { vectors: [] }));
    const byo = await openByoRetrieval({ backend: "onnx", dense } as RetrievalConfig, true);
    const index = join(tmp, "dense");
    const tDense = await best(1, () => ingest(BUILTIN_CORPUS.path, index, { vectors: byo.specs }));
    await byo.close();
    rows.push([
      "ingest: dense document vectors (passage prefix, max 512 tokens)",
      `${((tDense - tPlain) / n).toFixed(3)} ms per abstract`,
      `${n} abstracts; ingest ${(tDense / 1000).toFixed(1)} s vs ${(tPlain / 1000).toFixed(1)} s BM25 alone`,
    ]);

    log("retrieval: stage 1 (BM25 + dense, RRF), then cross-encoders");
    const stage1 = await openRetriever(index, { retrieval: { backend: "onnx", dense } as RetrievalConfig });
    const t1 = await best(2, () => stage1.retriever.stage1(claims));
    const stages = await stage1.retriever.stage1(claims);
    await stage1.close();
    rows.push([
      "retrieval stage 1: query vector + BM25 + dense + RRF",
      `${(t1 / CLAIMS).toFixed(2)} ms per claim`,
      `${CLAIMS} claims`,
    ]);
    for (const count of [1, 2]) {
      const r = await openRetriever(index, {
        retrieval: {
          backend: "onnx",
          dense,
          rerank: {
            models: Array.from({ length: count }, () => ({ modelDir: models.crossEncoder })),
            topN: TOP_N,
          },
        } as RetrievalConfig,
      });
      const t = await best(1, () => r.retriever.rankAll(stages, 10));
      await r.close();
      rows.push([
        `re-ranking: ${count} cross-encoder${count > 1 ? "s, RRF" : ""} over the top ${TOP_N}`,
        `${(t / (CLAIMS * TOP_N * count)).toFixed(3)} ms per candidate per model`,
        `${(t / CLAIMS).toFixed(1)} ms per claim`,
      ]);
    }

    log("verification: the NLI model over the top 5 abstracts of each claim, sentence by sentence");
    const pairs = await (async () => {
      const r = await openRetriever(plain, { model: null });
      const hits = await r.retriever.rankAll(stages.slice(0, 40), 5);
      const out = hits.flatMap((h, i) =>
        h.map((x) => {
          const d = r.retriever.index.docs.get(x.docno);
          return { claim: claims[i], abstract: d.abstract, sentences: d.sentences, title: d.title };
        }),
      );
      await r.close();
      return out;
    })();
    const nli = await openOnnxVerifier({ modelDir: models.nli });
    const tv = await best(2, () => nli.verifyPairs(pairs));
    const sentences = pairs.reduce((s, p) => s + p.sentences.length, 0);
    await nli.close();
    rows.push([
      "verification: NLI per abstract sentence (sentence-level)",
      `${(tv / pairs.length).toFixed(2)} ms per pair`,
      `${pairs.length} pairs, ${(tv / sentences).toFixed(3)} ms per sentence`,
    ]);

    log("narratives: the chat backend against a loopback server that answers at once");
    const server = await startChatServer((p) =>
      p.includes("First choose") ? { groups: [1] } : { codes: ["1_1"] },
    );
    try {
      for (const mode of ["flat", "two-step"] as const) {
        const chat = () => openChatNarratives({ baseUrl: server.baseUrl, model: "m", mode, concurrency: 4 });
        const t = await best(2, () => chat().classify(claims));
        rows.push([
          `narratives: chat, ${mode} (concurrency 4)`,
          `${(t / CLAIMS).toFixed(2)} ms per claim`,
          `our side + HTTP on loopback; add the model's answer time (${mode === "flat" ? 1 : 2} request${mode === "flat" ? "" : "s"} per claim)`,
        ]);
      }
    } finally {
      server.close();
    }

    log("built-in path, nothing configured: the default index (USE-lite + SIF + trained re-ranker)");
    const dflt = await ensureDefaultIndex(undefined, {
      dir: join(tmp, "default"),
      corpora: [{ path: BUILTIN_CORPUS.path, format: "climatecheck" }],
    });
    const builtin = await openRetriever(dflt);
    try {
      const some = claims.slice(0, 100);
      const tStage1 = await best(2, () => builtin.retriever.stage1(some));
      const s0 = await builtin.retriever.stage1(some);
      const asOnMain = () => s0.map((s) => builtin.retriever.rank(s, 10));
      if (JSON.stringify(asOnMain()) !== JSON.stringify(await builtin.retriever.rankAll(s0, 10)))
        throw new Error("the built-in ranking differs between rank and rankAll");
      const tMain = await best(5, async () => asOnMain());
      const tBranch = await best(5, () => builtin.retriever.rankAll(s0, 10));
      rows.push([
        `built-in (no config): stage 1, ${builtin.retriever.description}`,
        `${(tStage1 / some.length).toFixed(2)} ms per claim`,
        `${some.length} claims, USE-lite vector cache warm after the first run`,
      ]);
      rows.push([
        "built-in (no config): re-ranking, main's rank() vs this branch's rankAll()",
        `${(tMain / some.length).toFixed(3)} vs ${(tBranch / some.length).toFixed(3)} ms per claim`,
        "identical rankings",
      ]);
    } finally {
      await builtin.close();
    }

    const markdown = `Per-stage cost of the profile backends with the tiny random-weight models (\`npm run fixtures:tiny-models\`:
16-d embedding, one-row cross-encoder and NLI; their forward pass costs almost nothing), so each figure is the fixed
cost of our side: tokenising, batching by length, pooling, fusion, the chat client and its JSON checks. To project a
real model, add its own forward time per text (per abstract at ingest, per claim at query time, per candidate and
model for re-ranking, per abstract sentence for NLI, per request for a chat model). Best of a few runs; load average
${loadAverage()} (other jobs share these cores).

${table(["stage", "cost", "notes"], rows)}

The built-in path is unchanged when nothing is configured: without a profile the built-in encoders, linear fusion and
the trained re-ranker are used as before (the existing retrieval, pipeline and CLI tests pass unchanged), and the one
new step, \`rankAll\`, which without cross-encoders is \`rank\` per claim, gives the same rankings at the same cost.`;
    return {
      id: "byo-models",
      title: "Bring your own models: per-stage cost with the tiny models",
      command: "npm run bench -- byo-models",
      markdown,
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
};
