/**
 * Reading a 394,269-row corpus from Parquet (the size of the real ClimateCheck publications corpus) must stay under
 * 500 MB of memory. The file is generated from real SciFact sentences; the read runs in a child process so its
 * peak RSS is its own.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { homeDir, trainingFiles } from "../src/data/paths.ts";
import { readSciFactCorpus } from "../src/data/training-sets.ts";
import { type BenchSection, table } from "./report.ts";
import { seededShuffleSentences } from "./synthetic-corpus.ts";

const ROWS = 394_269;

async function generate(path: string): Promise<void> {
  const corpus = await readSciFactCorpus(trainingFiles().scifactCorpus);
  const { abstracts, titles } = seededShuffleSentences(corpus, ROWS);
  parquetWriteFile({
    filename: path,
    columnData: [
      { name: "abstract_id", data: abstracts.map((_, i) => String(i)), type: "STRING" },
      { name: "title", data: titles, type: "STRING" },
      { name: "abstract", data: abstracts, type: "STRING" },
      { name: "doi", data: abstracts.map((_, i) => `10.5555/cc.${i}`), type: "STRING" },
      { name: "source", data: abstracts.map((_, i) => (i % 2 ? "OpenAlex" : "S2ORC")), type: "STRING" },
    ],
  });
}

/** Child mode: stream the corpus and print rows, chars, seconds and peak RSS as JSON. */
async function readChild(path: string): Promise<void> {
  const { readCorpus } = await import("../src/data/climatecheck.ts");
  const t0 = performance.now();
  let rows = 0;
  let chars = 0;
  for await (const { abstract } of readCorpus(path)) {
    rows++;
    chars += abstract.abstract.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ rows, chars, seconds, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
}

export async function bench(): Promise<BenchSection> {
  const dir = join(homeDir(), "bench");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `corpus-${ROWS}.parquet`);
  if (!existsSync(path)) await generate(path);
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "bench/parquet-memory.ts", "--child", path],
    {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    },
  );
  const r = JSON.parse(out.trim().split("\n").pop() ?? "{}");
  const sizeMb = statSync(path).size / 2 ** 20;
  return {
    id: "parquet-memory",
    title: "Corpus reader: 394,269 rows from Parquet in bounded memory",
    command: "npm run bench -- parquet-memory",
    markdown: `Generated file: ${ROWS.toLocaleString("en")} abstracts built from real SciFact sentences (title, abstract, doi, source), ${sizeMb.toFixed(0)} MB, written by hyparquet-writer with its default row groups (1,000 then 100,000 rows). The reader decodes 4,096 rows at a time.\n\n${table(
      ["rows read", "abstract chars", "seconds", "rows/s", "peak RSS (MB)", "target"],
      [[r.rows, r.chars, r.seconds, Math.round(r.rows / r.seconds), r.maxRssMb, "< 500 MB"]],
    )}`,
  };
}

if (process.argv[2] === "--child") await readChild(process.argv[3]);
