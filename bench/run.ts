/**
 * `npm run bench [-- ID ...]`: runs the benchmark sections (all, or the named ones) and merges their figures into
 * BENCHMARKS.md, keeping the sections that were not rerun.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import type { Bench, BenchSection } from "./report.ts";

/** Registry: id -> loader. Each bench module exports `bench: Bench`. */
const BENCHES: Record<string, () => Promise<{ bench: Bench }>> = {
  "parquet-memory": () => import("./parquet-memory.ts"),
  narratives: () => import("./narratives.ts"),
  "narratives-fast": () => import("./narratives-fast.ts"),
  "narratives-check-model": () => import("./narratives-check-model.ts"),
  "narratives-speed": () => import("./narratives-speed.ts"),
  "narratives-data": () => import("./narratives-data.ts"),
  verification: () => import("./verification.ts"),
  "verification-tried": () => import("./verification-tried.ts"),
  retrieval: () => import("./retrieval.ts"),
  "retrieval-scale": () => import("./retrieval-scale.ts"),
  "retrieval-speed": () => import("./retrieval-speed.ts"),
  encoders: () => import("./encoders.ts"),
  ingest: () => import("./ingest.ts"),
  ev2r: () => import("./ev2r.ts"),
  predict: () => import("./predict.ts"),
  product: () => import("./product.ts"),
  "first-run": () => import("./first-run.ts"),
  queue: () => import("./queue.ts"),
  trust: () => import("./trust.ts"),
  "byo-models": () => import("./byo-models.ts"),
  "narratives-tried": () => import("./narratives-tried.ts"),
  "narratives-gate-cv": () => import("./narratives-gate-cv.ts"),
  judged: () => import("./judged.ts"),
  "verification-own": () => import("./verification-own.ts"),
  reliability: () => import("./reliability.ts"),
  "reliability-fuzz": () => import("./reliability-fuzz.ts"),
};

const FILE = "BENCHMARKS.md";
const START = (id: string) => `<!-- bench:${id} -->`;
const END = (id: string) => `<!-- /bench:${id} -->`;

function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node.js ${process.version}, ${process.platform}`;
}

function render(s: BenchSection, date: string): string {
  return `${START(s.id)}\n## ${s.title}\n\nReproduce: \`${s.command}\` · measured ${date} on ${machine()}\n\n${s.markdown.trim()}\n${END(s.id)}`;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((id) => !(id in BENCHES));
  if (unknown.length) {
    console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${Object.keys(BENCHES).join(", ")}`);
    process.exit(2);
  }
  const ids = wanted.length ? wanted : Object.keys(BENCHES);
  for (const id of ids) {
    console.error(`bench: ${id} ...`);
    const { bench } = await BENCHES[id]();
    const result = await bench();
    const section = render(result, new Date().toISOString().slice(0, 10));
    // Read the file just before writing: a long run must not undo sections written meanwhile.
    let doc = existsSync(FILE)
      ? readFileSync(FILE, "utf8")
      : "# Benchmarks\n\nWritten by `npm run bench`; each section says the one command that reproduces it.\n";
    // The section's own id: one bench may write another section (judged's dev run).
    const re = new RegExp(`${START(result.id)}[\\s\\S]*?${END(result.id)}`);
    doc = re.test(doc) ? doc.replace(re, () => section) : `${doc.trimEnd()}\n\n${section}\n`;
    writeFileSync(`${FILE}.tmp`, doc);
    renameSync(`${FILE}.tmp`, FILE);
  }
}

await main();
