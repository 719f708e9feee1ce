/**
 * Writes corpus/arxiv-climate.jsonl.gz, the built-in corpus: the union of ../shared/data/arxiv-climate (1,588
 * papers) and ../shared/data/arxiv-meta-climate (3,017 papers, 275 of them also in the first), both arXiv's CC0
 * metadata. The first set's records come first in their file order (so its rows keep their positions), then the
 * second set's new papers in theirs. Deterministic: the same inputs give the same bytes (gzip with no name or time).
 * Run again when either set changes: `node --import tsx bench/builtin-corpus.ts`, then bench/builtin-vectors.ts.
 */
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { trainingDataDir } from "../src/data/paths.ts";

interface ArxivRecord {
  abstract_id: string;
  title: string;
  abstract: string;
  doi: string | null;
  url: string;
  year: number;
  categories: string[];
  paper_license?: string | null;
}

function readSet(name: string): ArxivRecord[] {
  const path = join(trainingDataDir(), name, "corpus.jsonl");
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const r = JSON.parse(l) as ArxivRecord;
      if (!r.abstract_id || !r.title || !r.abstract)
        throw new Error(`${path}:${i + 1}: abstract_id, title or abstract missing`);
      return r;
    });
}

const climate = readSet("arxiv-climate");
const meta = readSet("arxiv-meta-climate");
const metaById = new Map(meta.map((r) => [r.abstract_id, r]));
const out: object[] = [];
const seen = new Set<string>();
const row = (r: ArxivRecord, source: string, doi: string | null) => ({
  abstract_id: r.abstract_id,
  title: r.title,
  abstract: r.abstract,
  doi,
  url: r.url,
  year: r.year,
  categories: r.categories,
  paper_license: r.paper_license ?? null,
  source,
});
for (const r of climate) {
  // A paper in both sets keeps the first set's record; the second may know its DOI.
  const other = metaById.get(r.abstract_id);
  out.push(row(r, other ? "arxiv-climate+arxiv-meta-climate" : "arxiv-climate", r.doi ?? other?.doi ?? null));
  seen.add(r.abstract_id);
}
for (const r of meta) if (!seen.has(r.abstract_id)) out.push(row(r, "arxiv-meta-climate", r.doi));

const text = `${out.map((r) => JSON.stringify(r)).join("\n")}\n`;
const target = BUILTIN_CORPUS.path;
await writeFile(`${target}.tmp`, gzipSync(Buffer.from(text, "utf8"), { level: 9 }));
await rename(`${target}.tmp`, target);
process.stderr.write(
  `wrote ${out.length} papers (${climate.length} + ${out.length - climate.length} new) to ${target}\n`,
);
