/**
 * `climatecheck ingest` of the SciFact corpus (5,183 abstracts) as a user runs it: with the default vector sets
 * (USE-lite on 2 worker threads, SIF word vectors) and a cold sentence-vector cache, then without vectors. The
 * clock includes opening the encoders (worker start-up, word-vector file) and closing them.
 */
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { homeDir, trainingFiles } from "../src/data/paths.ts";
import { ingest } from "../src/index/ingest.ts";
import { openEncoders } from "../src/retrieval/encoders.ts";
import { type Bench, table } from "./report.ts";

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(", ");

export const bench: Bench = async () => {
  const corpus = trainingFiles().scifactCorpus;
  const dir = join(homeDir(), "bench-tmp", "ingest-scifact");
  const loadStart = load();
  const rows: (string | number)[][] = [];
  let withVectors = Number.NaN;
  try {
    rmSync(dir, { recursive: true, force: true });
    const t0 = performance.now();
    const enc = await openEncoders({ workers: 2, cache: false });
    const opened = performance.now();
    let total = 0;
    try {
      total = (await ingest(corpus, dir, { format: "scifact", vectors: enc.specs })).total;
    } finally {
      await enc.close();
    }
    const s = (performance.now() - t0) / 1000;
    withVectors = s;
    rows.push([
      `with vectors (${enc.specs.map((v) => v.name).join(", ")}), cold vector cache`,
      total,
      s.toFixed(1),
      ((opened - t0) / 1000).toFixed(1),
      (total / s).toFixed(0),
    ]);
    rmSync(dir, { recursive: true, force: true });
    const t1 = performance.now();
    const r = await ingest(corpus, dir, { format: "scifact" });
    const s1 = (performance.now() - t1) / 1000;
    rows.push(["without vectors", r.total, s1.toFixed(1), "-", (r.total / s1).toFixed(0)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    id: "ingest",
    title: "Ingest of the SciFact corpus, with and without vectors",
    command: "npm run bench -- ingest",
    markdown: `The SciFact corpus (../shared/data/scifact/corpus.csv) into a fresh index, as \`climatecheck ingest\` does it:
the default vector sets with USE-lite on 2 worker threads and no vector cache, so every abstract is embedded
(title + lead, see the retrieval card), then without vectors. Wall time includes opening the encoders. Load average
(1, 5, 15 min) at the start: ${loadStart}; at the end: ${load()}.

${table(["ingest", "abstracts", "seconds", "of which opening the encoders", "abstracts/s"], rows)}

Target: with vectors under 3 minutes (${withVectors < 180 ? "met" : "missed"}).`,
  };
};
