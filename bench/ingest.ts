/**
 * `climatecheck ingest` of the SciFact corpus (5,183 abstracts) as a user runs it: with the default vector sets
 * (USE-lite on 2 worker threads, SIF word vectors) and a cold sentence-vector cache. The clock includes opening
 * the encoders (worker start-up, word-vector file) and closing them. Ingest without vectors is timed by the
 * retrieval bench.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { homeDir, trainingFiles } from "../src/data/paths.ts";
import { ingest } from "../src/index/ingest.ts";
import { openEncoders } from "../src/retrieval/encoders.ts";
import { type Bench, loadAverage, table } from "./report.ts";

export const bench: Bench = async () => {
  const corpus = trainingFiles().scifactCorpus;
  const dir = join(homeDir(), "bench-tmp", "ingest-scifact");
  const loadStart = loadAverage();
  rmSync(dir, { recursive: true, force: true });
  const t0 = performance.now();
  const enc = await openEncoders({ workers: 2, cache: false });
  const opened = performance.now();
  let total: number;
  try {
    total = (await ingest(corpus, dir, { format: "scifact", vectors: enc.specs })).total;
  } finally {
    await enc.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const row = [
    `with vectors (${enc.specs.map((v) => v.name).join(", ")}), cold vector cache`,
    total,
    seconds.toFixed(1),
    ((opened - t0) / 1000).toFixed(1),
    (total / seconds).toFixed(0),
  ];
  return {
    id: "ingest",
    title: "Ingest of the SciFact corpus with vectors",
    command: "npm run bench -- ingest",
    markdown: `The SciFact corpus (../shared/data/scifact/corpus.csv) into a fresh index, as \`climatecheck ingest\` does it:
the default vector sets with USE-lite on 2 worker threads and no vector cache, so every abstract is embedded
(title + lead, see the retrieval card). Wall time includes opening the encoders. Ingest without vectors: the
retrieval section. Load average (1/5/15 min) at the start: ${loadStart}; at the end: ${loadAverage()}.

${table(["ingest", "abstracts", "seconds", "of which opening the encoders", "abstracts/s"], [row])}

Target: with vectors under 3 minutes (${seconds < 180 ? "met" : "missed"}).`,
  };
};
