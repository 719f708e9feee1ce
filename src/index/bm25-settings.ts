/**
 * The BM25 settings an index gets at finalise: the corpus kind from its mean sentences per doc, then the values
 * tuned for that kind on training claims (models/retrieval/bm25.json, written by `climatecheck-train retrieval`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MODELS_DIR } from "../data/paths.ts";
import { BM25_ANALYZER } from "../text/stem.ts";
import { STOCK_PARAMS } from "./bm25.ts";
import type { Rm3Options } from "./rm3.ts";
import type { Bm25Settings, CorpusKind } from "./schema.ts";

export const BM25_TUNING_PATH = join(MODELS_DIR, "retrieval", "bm25.json");

export interface KindTuning {
  k1: number;
  b: number;
  titleWeight: number;
  depth: number;
  rm3: Rm3Options | null;
}

export interface Bm25Tuning {
  schema: 1;
  analyzer: string;
  kinds: Record<CorpusKind, KindTuning>;
  /** How each value was chosen, with the cross-validated figures (for the model card). */
  notes: Record<string, unknown>;
}

/** Stock values for a kind without a tuning file (the files still build; the card says what shipped). */
const STOCK_TUNING: KindTuning = { ...STOCK_PARAMS, depth: 1000, rm3: null };

export function corpusKind(docs: number, sentences: number): CorpusKind {
  return docs > 0 && sentences / docs <= 1.5 ? "sentences" : "abstracts";
}

export function readBm25Tuning(path = BM25_TUNING_PATH): Bm25Tuning | undefined {
  if (!existsSync(path)) return undefined;
  const t = JSON.parse(readFileSync(path, "utf8")) as Bm25Tuning;
  if (t.schema !== 1) throw new Error(`${path}: BM25 tuning schema ${t.schema}, expected 1`);
  return t;
}

/** The settings for a corpus kind: tuned ones when their analysis is the current one, else stock. */
export function settingsFor(kind: CorpusKind, tuning = readBm25Tuning()): Bm25Settings {
  const tuned = tuning?.analyzer === BM25_ANALYZER ? tuning.kinds[kind] : undefined;
  const t = tuned ?? STOCK_TUNING;
  return {
    analyzer: BM25_ANALYZER,
    kind,
    k1: t.k1,
    b: t.b,
    titleWeight: t.titleWeight,
    depth: t.depth,
    rm3: t.rm3,
    source: tuned ? "models/retrieval/bm25.json" : "stock (no tuning file)",
  };
}
