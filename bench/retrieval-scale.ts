/**
 * Retrieval at the size of the real corpus: a generated 400,000-abstract corpus (real SciFact sentences and titles,
 * shuffled with a fixed seed). Ingest without vectors, queries and dense search run in child processes so peak
 * memory is theirs; USE-lite throughput is measured on a slice and projected, since embedding 400k abstracts takes
 * hours here. Dense search runs on 400k vectors made from real USE-lite vectors of the SciFact abstracts each
 * synthetic abstract's title and lead came from, with real USE-lite claim vectors as queries.
 *
 * Options (environment): SCALE_N (abstracts, default 400000), SCALE_KEEP=1 keeps the work folder.
 */
import { execFile } from "node:child_process";
import { createWriteStream, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { homeDir, trainingFiles } from "../src/data/paths.ts";
import { readSciFactClaims, readSciFactCorpus } from "../src/data/training-sets.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { titleAndLead } from "../src/index/embed-text.ts";
import { IVF_MIN_DOCS } from "../src/index/ingest.ts";
import { USE_LEAD_CHARS } from "../src/retrieval/encoders.ts";
import type { CorpusAbstract } from "../src/types.ts";
import { type BenchSection, loadAverage, table } from "./report.ts";
import { seededShuffleSentences } from "./synthetic-corpus.ts";

const N = Number(process.env.SCALE_N ?? 400_000);
const REAL = 394_269;
const run = promisify(execFile);

interface DenseRun {
  lists: number;
  defaultProbe: number;
  ivfSeconds: number;
  exhaustiveP50: number;
  probes: { share: number; probe: number; recall: number; p50: number; p95: number }[];
}

interface DenseFigures {
  queries: number;
  coherent: DenseRun;
  mixed: DenseRun;
  maxRssMiB: number;
}

async function child(args: string[]): Promise<Record<string, number>> {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "bench/retrieval-scale-child.ts", ...args],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout.trim().split("\n").pop() ?? "{}");
}

function du(dir: string): number {
  return readdirSync(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
}

async function writeCorpus(
  path: string,
): Promise<{ titles: string[]; abstracts: string[]; sources: Uint16Array; corpus: CorpusAbstract[] }> {
  const corpus = await readSciFactCorpus(trainingFiles().scifactCorpus);
  const out = createWriteStream(path);
  let sample: { titles: string[]; abstracts: string[] } = { titles: [], abstracts: [] };
  // Title source and lead source of each synthetic abstract (SciFact has fewer than 65,536 abstracts).
  const sources = new Uint16Array(2 * N);
  for (let chunk = 0; chunk < N / 10_000; chunk++) {
    const { abstracts, titles, titleSource, leadSource } = seededShuffleSentences(
      corpus,
      10_000,
      1000 + chunk,
    );
    for (let i = 0; i < abstracts.length; i++) {
      sources[2 * (chunk * 10_000 + i)] = titleSource[i];
      sources[2 * (chunk * 10_000 + i) + 1] = leadSource[i];
    }
    if (chunk === 0) sample = { titles: titles.slice(0, 2000), abstracts: abstracts.slice(0, 2000) };
    const text = abstracts
      .map((a, i) => JSON.stringify({ abstract_id: `s${chunk * 10_000 + i}`, title: titles[i], abstract: a }))
      .join("\n");
    if (!out.write(`${text}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return { ...sample, sources, corpus };
}

const bytes = (x: Float32Array | Uint16Array) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

function flat(vectors: Float32Array[]): Float32Array {
  const out = new Float32Array(vectors.length * (vectors[0]?.length ?? 0));
  vectors.forEach((v, i) => {
    out.set(v, i * v.length);
  });
  return out;
}

/** The target line: met or not in each configuration. */
function targetLine(thread: number, worker: number): string {
  const verdict = (ms: number) => (ms < 100 ? "met" : "**not met**");
  return `${verdict(worker)} with the claim embedded in a worker thread (wall p50 ${worker.toFixed(1)} ms), ${verdict(thread)} with everything in the query thread (${thread.toFixed(1)} ms)`;
}

export async function bench(): Promise<BenchSection> {
  const work = join(homeDir(), "bench-tmp", "scale");
  await mkdir(work, { recursive: true });
  const corpus = join(work, "corpus-400k.jsonl");
  const idx = join(work, "index");
  console.error("retrieval-scale: writing corpus");
  const sample = await writeCorpus(corpus);
  const corpusMiB = statSync(corpus).size / 2 ** 20;
  rmSync(idx, { recursive: true, force: true });
  console.error("retrieval-scale: ingest without vectors");
  const ing = await child(["ingest", corpus, idx]);
  const size = du(idx) / 2 ** 20;
  const claims = (await readSciFactClaims(trainingFiles().scifactClaims)).slice(0, 110).map((c) => c.claim);
  const claimsFile = join(work, "claims.json");
  writeFileSync(claimsFile, JSON.stringify(claims));
  console.error("retrieval-scale: queries");
  const q = await child(["query", idx, claimsFile]);

  // Real USE-lite vectors (from the vector cache when it has them) of the SciFact abstracts and of the claims.
  const recipe = titleAndLead(USE_LEAD_CHARS);
  console.error("retrieval-scale: dense search");
  const cached = await openUseLite({ workers: 2 });
  const srcVectors = await cached.embed(
    sample.corpus.map((a) =>
      recipe.text({ id: a.id, title: a.title, abstract: a.abstract, sentences: a.sentences ?? [a.abstract] }),
    ),
  );
  const claimVectors = await cached.embed(claims.slice(10));
  await cached.close();
  writeFileSync(join(work, "source-vectors.f32"), bytes(flat(srcVectors)));
  writeFileSync(join(work, "claim-vectors.f32"), bytes(flat(claimVectors)));
  writeFileSync(join(work, "sources.u16"), bytes(sample.sources));
  const dense = (await child(["dense", work])) as unknown as DenseFigures;
  console.error("retrieval-scale: whole retrieve, both vector sets");
  const wholeIngest = await child(["whole-ingest", corpus, work]);
  // Each in a fresh process (nothing warm from ingest or from the other run): the claim embedded in the query
  // thread, then in one worker thread.
  const whole = await child(["whole", work, claimsFile, "thread"]);
  const wholeWorker = await child(["whole", work, claimsFile, "worker"]);

  // USE-lite throughput on the recipe the index uses, no cache, both cores.
  const texts = sample.abstracts
    .slice(0, 600)
    .map((a, i) => recipe.text({ id: "", title: sample.titles[i], abstract: a, sentences: [a] }));
  const enc = await openUseLite({ cacheDir: false, workers: 2 });
  const t = performance.now();
  await enc.embed(texts);
  const useRate = texts.length / ((performance.now() - t) / 1000);
  await enc.close();
  const load = loadAverage();

  if (process.env.SCALE_KEEP !== "1") rmSync(work, { recursive: true, force: true });
  const hours = (n: number, rate: number) => `${(n / rate / 3600).toFixed(1)} h`;
  const rate = ing.total / ing.seconds;
  const vecMiB = (N * 512 * 4) / 2 ** 20;
  const { coherent, mixed } = dense;
  const ivfMiB = (coherent.lists * 512 * 4 + (coherent.lists + 1 + N) * 4) / 2 ** 20;
  const probeRows = (run: DenseRun, label: string) =>
    run.probes.map((p) => [
      `IVF dense top 200, ${label} vectors, ${p.probe} of ${run.lists} lists${p.probe === run.defaultProbe ? " (default)" : ""}: recall@200 of the exact top 200; p50 / p95`,
      `${p.recall.toFixed(3)}; ${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} ms`,
    ]);
  const rows: (string | number)[][] = [
    ["corpus", `${N.toLocaleString("en")} abstracts, ${corpusMiB.toFixed(0)} MiB JSONL`],
    [
      "ingest without vectors",
      `${ing.seconds.toFixed(0)} s (${rate.toFixed(0)} abstracts/s), peak RSS ${ing.maxRssMiB.toFixed(0)} MiB`,
    ],
    ["index size on disk (no vectors)", `${size.toFixed(0)} MiB`],
    ["USE-lite vectors + IVF lists (+ on disk)", `${vecMiB.toFixed(0)} + ${ivfMiB.toFixed(1)} MiB`],
    [
      `IVF build at ingest (two-level k-means, ${coherent.lists} lists, fixed seed)`,
      `${coherent.ivfSeconds.toFixed(1)} s`,
    ],
    ["open index (no vectors)", `${q.openSeconds.toFixed(1)} s`],
    [
      `one claim, BM25 top 1000 + features of the top 100, p50 / p95 (${q.queries} claims)`,
      `${q.p50.toFixed(0)} / ${q.p95.toFixed(0)} ms`,
    ],
    [
      "of which BM25 top 1000 alone (MaxScore), p50 / p95",
      `${q.bm25p50.toFixed(1)} / ${q.bm25p95.toFixed(1)} ms`,
    ],
    ["peak RSS of the query process (no vectors)", `${q.maxRssMiB.toFixed(0)} MiB`],
    [
      `exhaustive dense search over ${N.toLocaleString("en")} × 512, p50 per claim`,
      `${coherent.exhaustiveP50.toFixed(0)} ms`,
    ],
    ...probeRows(coherent, "coherent"),
    ...probeRows(mixed, "mixed"),
    ["peak RSS of the dense process (400k × 512 vectors + IVF)", `${dense.maxRssMiB.toFixed(0)} MiB`],
    [
      "ingest with both vector sets (SIF computed, USE-lite synthetic mixed), IVF lists for both; peak RSS",
      `${wholeIngest.ingestSeconds.toFixed(0)} s; ${wholeIngest.maxRssMiB.toFixed(0)} MiB`,
    ],
    [
      `**one claim, whole \`retrieve\`** (claim embedding, BM25, IVF dense ${whole.probe} of ${whole.lists} lists, features, re-ranking), claim embedded in the query thread, wall p50 / p95 (${whole.queries} claims)`,
      `${whole.wallP50.toFixed(1)} / ${whole.wallP95.toFixed(1)} ms`,
    ],
    [
      "the same, CPU time of the process p50 / p95; peak RSS",
      `${whole.cpuP50.toFixed(1)} / ${whole.cpuP95.toFixed(1)} ms; ${whole.maxRssMiB.toFixed(0)} MiB`,
    ],
    [
      "**the same, claim embedded in one worker thread** (the query thread meanwhile runs BM25 and the SIF set), wall p50 / p95",
      `${wholeWorker.wallP50.toFixed(1)} / ${wholeWorker.wallP95.toFixed(1)} ms`,
    ],
    [
      "the same, CPU time of the process (both threads) p50 / p95; peak RSS",
      `${wholeWorker.cpuP50.toFixed(1)} / ${wholeWorker.cpuP95.toFixed(1)} ms; ${wholeWorker.maxRssMiB.toFixed(0)} MiB`,
    ],
    [
      `USE-lite embedding, title + lead (${texts.length} texts, 2 workers, no cache)`,
      `${useRate.toFixed(1)} texts/s`,
    ],
    [
      `projected ingest with USE-lite vectors, real corpus (${REAL.toLocaleString("en")})`,
      `${hours(REAL, useRate)} (+ ${(REAL / rate).toFixed(0)} s for the rest and ${coherent.ivfSeconds.toFixed(0)} s for the IVF lists)`,
    ],
    [
      `projected ingest without vectors, real corpus (${REAL.toLocaleString("en")})`,
      `${(REAL / rate).toFixed(0)} s`,
    ],
    ["load average (1, 5, 15 min) at the end", load],
  ];
  return {
    id: "retrieval-scale",
    title: "Abstract retrieval at 400,000 abstracts",
    command: "npm run bench -- retrieval-scale",
    markdown: `${table(["measure", "value"], rows)}\n\nCorpus: SciFact sentences and titles shuffled into 6-12-sentence abstracts (bench/synthetic-corpus.ts). ${existsSync(idx) ? "" : "Work files are removed afterwards."} Dense vectors are built from the real USE-lite vectors (title + lead) of the SciFact abstracts: *coherent* = the normalised sum of the vector of the abstract the synthetic title came from and of one of its 10 nearest SciFact abstracts (one topic, as a real abstract has); *mixed* = the sum for the abstracts its title and its first sentence came from (two unrelated topics, as the synthetic text has: a worst case for any clustering). Queries: the real USE-lite vectors of ${dense.queries} SciFact claims; recall is against exhaustive search on the same vectors. Indexes below ${IVF_MIN_DOCS.toLocaleString("en")} abstracts (SciFact, Climate-FEVER) keep exact exhaustive search. The whole-retrieve rows run the shipped pipeline (src/retrieval/retriever.ts with the shipped re-ranker) on an index with both vector sets: SIF vectors computed from the synthetic text, USE-lite vectors the *mixed* synthetic ones (the slower case for IVF), the claim embedded by the real USE-lite without a cache, each configuration in a fresh process after 10 warm-up claims. *Query thread*: everything on one thread, as \`serve\` and \`check\` run today. *Worker thread*: USE-lite embeds the claim on a second thread while the query thread runs BM25, the SIF set's IVF search and the field scores of the docs found so far (Retriever.stage1 starts every encoder first; a batch lane's encoder pool gets the same overlap); the IVF search of the USE-lite set, the re-ranking features and the model then run on the query thread. Target of issue 14: retrieval p50 under 100 ms at 400,000 abstracts: ${targetLine(whole.wallP50, wholeWorker.wallP50)} at the load average below (other jobs share the 2 cores; with a busy second core the worker thread gains little).`,
  };
}
