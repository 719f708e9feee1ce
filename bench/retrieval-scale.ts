/**
 * Retrieval at the size of the real corpus: a generated 400,000-abstract corpus (real SciFact sentences and titles,
 * shuffled with a fixed seed). Ingest without vectors and queries run in child processes so peak memory is theirs;
 * USE-lite throughput is measured on a slice and projected, since embedding 400k abstracts takes hours here.
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
import { USE_LEAD_CHARS } from "../src/retrieval/encoders.ts";
import { type BenchSection, table } from "./report.ts";
import { seededShuffleSentences } from "./synthetic-corpus.ts";

const N = 400_000;
const REAL = 394_269;
const run = promisify(execFile);

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

async function writeCorpus(path: string): Promise<{ titles: string[]; abstracts: string[] }> {
  const corpus = await readSciFactCorpus(trainingFiles().scifactCorpus);
  const out = createWriteStream(path);
  let sample: { titles: string[]; abstracts: string[] } = { titles: [], abstracts: [] };
  for (let chunk = 0; chunk < N / 10_000; chunk++) {
    const { abstracts, titles } = seededShuffleSentences(corpus, 10_000, 1000 + chunk);
    if (chunk === 0) sample = { titles: titles.slice(0, 2000), abstracts: abstracts.slice(0, 2000) };
    const text = abstracts
      .map((a, i) => JSON.stringify({ abstract_id: `s${chunk * 10_000 + i}`, title: titles[i], abstract: a }))
      .join("\n");
    if (!out.write(`${text}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return sample;
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

  // USE-lite throughput on the recipe the index uses, no cache, both cores.
  const recipe = titleAndLead(USE_LEAD_CHARS);
  const texts = sample.abstracts
    .slice(0, 600)
    .map((a, i) => recipe.text({ id: "", title: sample.titles[i], abstract: a, sentences: [a] }));
  const enc = await openUseLite({ cacheDir: false, workers: 2 });
  const t = performance.now();
  await enc.embed(texts);
  const useRate = texts.length / ((performance.now() - t) / 1000);
  await enc.close();

  rmSync(work, { recursive: true, force: true });
  const hours = (n: number, rate: number) => `${(n / rate / 3600).toFixed(1)} h`;
  const rows: (string | number)[][] = [
    ["corpus", `${N.toLocaleString("en")} abstracts, ${corpusMiB.toFixed(0)} MiB JSONL`],
    [
      "ingest without vectors",
      `${ing.seconds.toFixed(0)} s (${(ing.total / ing.seconds).toFixed(0)} abstracts/s), peak RSS ${ing.maxRssMiB.toFixed(0)} MiB`,
    ],
    ["index size on disk (no vectors)", `${size.toFixed(0)} MiB`],
    ["USE-lite vectors (+ on disk)", `${((N * 512 * 4) / 2 ** 20).toFixed(0)} MiB`],
    ["open index", `${q.openSeconds.toFixed(1)} s`],
    [
      `one claim, BM25 top 1000 + features of the top 100, p50 / p95 (${q.queries} claims)`,
      `${q.p50.toFixed(0)} / ${q.p95.toFixed(0)} ms`,
    ],
    ["exhaustive dense search over 400k × 512 (per claim)", `${q.denseMs.toFixed(0)} ms`],
    ["peak RSS of the query process (index + 400k × 512 vectors in memory)", `${q.maxRssMiB.toFixed(0)} MiB`],
    [
      `USE-lite embedding, title + lead (${texts.length} texts, 2 workers, no cache)`,
      `${useRate.toFixed(1)} texts/s`,
    ],
    [
      `projected ingest with USE-lite vectors, real corpus (${REAL.toLocaleString("en")})`,
      `${hours(REAL, useRate)} (+ ${(REAL / (ing.total / ing.seconds)).toFixed(0)} s for the rest)`,
    ],
  ];
  return {
    id: "retrieval-scale",
    title: "Abstract retrieval at 400,000 abstracts",
    command: "npm run bench -- retrieval-scale",
    markdown: `${table(["measure", "value"], rows)}\n\nCorpus: SciFact sentences and titles shuffled into 6-12-sentence abstracts (bench/synthetic-corpus.ts). ${existsSync(idx) ? "" : "Work files are removed afterwards."} Dense latency is measured on synthetic values (the cost of exhaustive search does not depend on them); one claim with dense search at this size is the BM25 figure plus that line plus the claim embedding.`,
  };
}
