/**
 * The on-disk layout of a retrieval index and its manifest. The manifest is the single source of truth on what
 * was ingested: schema version, corpus fingerprints, vector sets and the commit point of an unfinished ingest.
 */
import { existsSync, readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import type { Analyzer } from "../text/stem.ts";
import type { FileChecksum } from "./checksums.ts";
import { crashPoint } from "./crash-points.ts";
import type { Rm3Options } from "./rm3.ts";

/** Bumped whenever a file format below changes; an index of another version is refused, never misread. */
export const SCHEMA_VERSION = 3;

export const FILES = {
  manifest: "manifest.json",
  /** One JSON object per abstract (StoredDoc, written by encodeDoc), in docno order. */
  docs: "docs.jsonl",
  /** Byte offset of each doc in docs.jsonl, plus the end (Float64, n + 1 entries); written at finalise. */
  offsets: "docs.offsets",
  /** Doc ids, one per line, in docno order; written at finalise. */
  ids: "docs.ids",
  /** Vocabulary, one term per line, term id = line. */
  terms: "bm25.terms",
  /**
   * Header nTerms, nPostings (Uint32); k1, b, title weight, 0 (Float32: the parameters of the bounds); start
   * per term (Uint32, nTerms + 1); docnos (Uint32); packed tf title << 8 | abstract (Uint16, each capped at 255,
   * padded to an even count); per-term score bound (Float32). Terms are Porter2 stems (schema 3).
   */
  postings: "bm25.postings",
  /** Index-term counts per doc: title then abstract (Uint32 each). */
  lengths: "bm25.lengths",
  vectors: (name: string) => `vectors.${name}.f32`,
  /** IVF lists of a vector set (src/index/ivf.ts); only for sets of IVF_MIN_DOCS or more, written at finalise. */
  ivf: (name: string) => `vectors.${name}.ivf`,
} as const;

/** What an abstract becomes in the index: the text later stages need, with its sentence boundaries. */
export interface StoredDoc {
  id: string;
  title?: string;
  abstract: string;
  sentences: string[];
  doi?: string;
  url?: string;
  year?: number;
}

/**
 * One docs.jsonl line. The abstract is left out when it is just its sentences joined by spaces (it nearly always
 * is), which halves the file and the time spent writing and parsing it.
 */
export function encodeDoc(doc: StoredDoc): string {
  if (doc.abstract !== doc.sentences.join(" ")) return JSON.stringify(doc);
  const { id, title, sentences, doi, url, year } = doc;
  return JSON.stringify({ id, title, sentences, doi, url, year });
}

export function decodeDoc(line: string): StoredDoc {
  const doc = JSON.parse(line) as StoredDoc;
  doc.abstract ??= doc.sentences.join(" ");
  return doc;
}

export interface VectorSetInfo {
  /** Encoder name, e.g. "use-lite" or "sif-100"; a query must be embedded by the same encoder. */
  encoder: string;
  dim: number;
  /** How a doc becomes the text that is embedded (see src/index/embed-text.ts). */
  text: string;
  /** Docs embedded so far (the set's own commit point; a set added to an existing index catches up). */
  docs: number;
}

export interface SourceInfo {
  path: string;
  /** sha256 of the file bytes. */
  fingerprint: string;
  bytes: number;
  added: number;
  skipped: number;
}

/** One-sentence evidence (Climate-FEVER style) or whole abstracts: BM25 is tuned for each separately. */
export type CorpusKind = "sentences" | "abstracts";

/** How the BM25 side of the index analyses and scores text, and how deep its candidate list goes. */
export interface Bm25Settings {
  analyzer: Analyzer;
  /** Decided at finalise from the mean sentences per doc (at most 1.5: "sentences"). */
  kind: CorpusKind;
  k1: number;
  b: number;
  titleWeight: number;
  /** BM25 candidates per claim in stage 1. */
  depth: number;
  /** Pseudo-relevance feedback for the first stage, or null (off). */
  rm3: Rm3Options | null;
  /** Where the values come from (models/retrieval/bm25.json, chosen by cross-validation on training claims). */
  source: string;
}

export interface Manifest {
  schema: number;
  createdAt: string;
  /** Vector sets, keyed by name (the file suffix). Empty when ingested with --no-vectors. */
  vectors: Record<string, VectorSetInfo>;
  sources: SourceInfo[];
  /** Commit point: docs and vectors written up to here are complete; anything past it is discarded on resume. */
  committed: { docs: number; bytes: number };
  /** BM25 settings of the written files (set at finalise; absent while the first ingest runs). */
  bm25?: Bm25Settings;
  /** True once the BM25 files and offsets match the committed docs. */
  complete: boolean;
  /**
   * Size and CRC-32 of every file of the complete index (docs and vectors: their committed prefix), checked at
   * open. Absent while an ingest runs, and in indexes written before checksums were recorded (opened unchecked).
   */
  files?: Record<string, FileChecksum>;
}

export function manifestPath(dir: string): string {
  return join(dir, FILES.manifest);
}

/** Reads and checks the manifest: missing, unreadable or of another schema version is a DataError. */
export function readManifest(dir: string): Manifest {
  const path = manifestPath(dir);
  if (!existsSync(path))
    throw new DataError(dir, "not an index (no manifest.json); build one with `climatecheck ingest`");
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new DataError(path, "unreadable index manifest; delete the index and ingest again");
  }
  if (m.schema !== SCHEMA_VERSION) {
    throw new DataError(
      path,
      `index schema version ${m.schema ?? "unknown"} is not supported by this version (expects ${SCHEMA_VERSION}); delete the index and ingest again`,
      { field: "schema" },
    );
  }
  return m as Manifest;
}

/**
 * Whether `dir` holds an index built by another schema version. Indexes we derive ourselves (the default index,
 * the evaluation indexes) are rebuilt then; a user's index keeps failing with readManifest's message.
 */
export function hasOtherSchema(dir: string): boolean {
  try {
    const m = JSON.parse(readFileSync(manifestPath(dir), "utf8")) as Partial<Manifest>;
    return m.schema !== SCHEMA_VERSION;
  } catch {
    return false;
  }
}

/** Atomic write: temp file then rename, so a crash leaves the previous commit point intact. */
export async function writeManifest(dir: string, m: Manifest): Promise<void> {
  const tmp = `${manifestPath(dir)}.tmp`;
  await writeFile(tmp, `${JSON.stringify(m, null, 2)}\n`);
  crashPoint("manifest: temp written");
  await rename(tmp, manifestPath(dir));
  crashPoint(`manifest: renamed (${m.complete ? "complete" : `${m.committed.docs} docs committed`})`);
}
