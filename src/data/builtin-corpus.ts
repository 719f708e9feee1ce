/**
 * The built-in corpus: 4,330 arXiv climate-science papers (titles and abstracts, CC0 metadata; provenance and credit
 * in corpus/SOURCE.md; written by bench/builtin-corpus.ts), shipped gzipped in the package so the default index can
 * be built on any machine, offline.
 * It is a small demo corpus; what an index holds is told from its manifest's source fingerprints.
 */
import { join } from "node:path";
import { readManifest, type SourceInfo } from "../index/schema.ts";
import { PACKAGE_ROOT } from "./paths.ts";

export const BUILTIN_CORPUS = {
  path: join(PACKAGE_ROOT, "corpus", "arxiv-climate.jsonl.gz"),
  /** sha256 of the .gz file, as ingest records it in the manifest (a test keeps it in step with the file). */
  sha256: "3bc7d761074efdcfe229d73e975764653f657d68404715076ad6ef22def6f81f",
  /** Fingerprints of earlier built-in corpora: a default index built from one alone is rebuilt from this one. */
  previous: ["0bcc21bfed4952980f16b34abb58a2509b145d60bddaa981b1d8448f1c6d1fd1"],
  name: "arXiv climate-science papers (built-in demo corpus)",
  abstracts: 4330,
  /**
   * The USE-lite vectors of its abstracts (Float32, one row per abstract in file order, gzipped), written by
   * bench/builtin-vectors.ts: encoding them is most of a first run's time. Used only while model and text recipe
   * are the ones recorded here (a test checks them against USE-lite).
   */
  vectors: {
    path: join(PACKAGE_ROOT, "corpus", "arxiv-climate.use-lite.f32.gz"),
    model: "use-lite@0.2.0",
    dim: 512,
    recipe: "title+lead:200",
  },
} as const;

/** How to load the real corpus, said wherever the demo corpus is shown. */
export const REAL_CORPUS_HINT =
  "this is a small demo corpus; for real use load the official ClimateCheck corpus (394,269 abstracts): " +
  "`npx climatecheck data pull`, then `npx climatecheck ingest .climatecheck/data/corpus/climatecheck_publications_corpus.parquet` " +
  "(or set CLIMATECHECK_CORPUS to a corpus file before the first start)";

/** What a loaded index holds, for /healthz, the start-up line and the page. */
export interface CorpusInfo {
  /** The built-in corpus's name, else the file names of the ingested corpora. */
  name: string;
  abstracts: number;
  builtin: boolean;
  /** For the built-in corpus: that it is a demo and how to load the real one; else null. */
  note: string | null;
}

export const isBuiltinOnly = (sources: Pick<SourceInfo, "fingerprint">[]): boolean =>
  sources.length > 0 && sources.every((s) => s.fingerprint === BUILTIN_CORPUS.sha256);

/** A default index built by an earlier version from its built-in corpus alone: rebuilt from today's. */
export const isOlderBuiltin = (sources: Pick<SourceInfo, "fingerprint">[]): boolean =>
  sources.length > 0 &&
  sources.every((s) => (BUILTIN_CORPUS.previous as readonly string[]).includes(s.fingerprint));

export function describeCorpus(
  sources: Pick<SourceInfo, "path" | "fingerprint">[],
  abstracts: number,
): CorpusInfo {
  if (isBuiltinOnly(sources))
    return { name: BUILTIN_CORPUS.name, abstracts, builtin: true, note: REAL_CORPUS_HINT };
  const names = [...new Set(sources.map((s) => s.path.split(/[\\/]/).at(-1) ?? s.path))];
  return { name: names.join(" + ") || "unknown", abstracts, builtin: false, note: null };
}

/** The corpus of the index in `dir` (its manifest's sources); "unknown" when the manifest cannot be read. */
export function corpusOf(dir: string, abstracts: number): CorpusInfo {
  try {
    return describeCorpus(readManifest(dir).sources, abstracts);
  } catch {
    return { name: "unknown", abstracts, builtin: false, note: null };
  }
}
