/**
 * Feature families of the narratives classifier, each an L2-normalised block so no family drowns the others:
 * word n-gram TF-IDF, char n-gram TF-IDF, similarity to the taxonomy descriptions (in TF-IDF space and, with an
 * encoder, in sentence-embedding space) and the sentence embedding itself.
 */

import { concatSparse, dot, type SparseVector, sparseFromDense } from "../learning/sparse.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";
import { NARRATIVES } from "../taxonomy/cards.ts";
import { tokenize } from "../text/tokenize.ts";

export type FeatureFamily = "word" | "char" | "desc" | "use";
export const FEATURE_FAMILIES: readonly FeatureFamily[] = ["word", "char", "desc", "use"];

export interface FeatureConfig {
  families: FeatureFamily[];
  wordMaxFeatures: number;
  charMaxFeatures: number;
}

export interface FeaturesJson {
  config: FeatureConfig;
  word?: TfidfJson;
  char?: TfidfJson;
  /** Sentence embeddings of the code descriptions (only with "use"), one per code of DESCRIBED_CODES. */
  descEmbeddings?: number[][];
}

/** Codes whose description serves as a prototype (every code but 0_0, which has no content of its own). */
export const DESCRIBED_CODES: readonly string[] = NARRATIVES.filter((n) => n.code !== "0_0").map(
  (n) => n.code,
);

/** The text that stands for a code: its name, published label and description. */
export function descriptionText(code: string): string {
  const n = NARRATIVES.find((x) => x.code === code);
  if (!n) throw new Error(`unknown code ${code}`);
  return `${n.name}. ${n.skosLabel}. ${n.description}`;
}

export class NarrativeFeatures {
  readonly config: FeatureConfig;
  private readonly word?: TfidfVectorizer;
  private readonly char?: TfidfVectorizer;
  private readonly descWord: SparseVector[];
  private readonly descEmbeddings?: Float32Array[];
  /** Total width of the concatenated vector. */
  readonly dim: number;

  private constructor(
    config: FeatureConfig,
    word?: TfidfVectorizer,
    char?: TfidfVectorizer,
    descEmb?: Float32Array[],
  ) {
    this.config = config;
    this.word = word;
    this.char = char;
    this.descEmbeddings = descEmb;
    this.descWord = word ? DESCRIBED_CODES.map((c) => word.transform(descriptionText(c))) : [];
    this.dim = this.blocks("", undefined).reduce((s, b) => s + b.width, 0);
  }

  get needsEncoder(): boolean {
    return this.config.families.includes("use");
  }

  /** Fits the vocabularies on the training texts; `embedDescriptions` is required when "use" is a family. */
  static fit(
    texts: readonly string[],
    config: FeatureConfig,
    descEmbeddings?: Float32Array[],
  ): NarrativeFeatures {
    const has = (f: FeatureFamily) => config.families.includes(f);
    if (has("use") && !descEmbeddings) throw new Error("the use family needs the description embeddings");
    // The word vocabulary also backs the description similarity, so it is fitted whenever either is on.
    const word =
      has("word") || has("desc")
        ? TfidfVectorizer.fit(texts, {
            analyzer: "word",
            ngram: [1, 2],
            minDf: 2,
            maxFeatures: config.wordMaxFeatures,
            sublinearTf: true,
          })
        : undefined;
    const char = has("char")
      ? TfidfVectorizer.fit(texts, {
          analyzer: "char",
          ngram: [2, 5],
          minDf: 3,
          maxFeatures: config.charMaxFeatures,
          sublinearTf: true,
        })
      : undefined;
    return new NarrativeFeatures({ ...config }, word, char, has("use") ? descEmbeddings : undefined);
  }

  static fromJSON(json: FeaturesJson): NarrativeFeatures {
    return new NarrativeFeatures(
      json.config,
      json.word ? TfidfVectorizer.fromJSON(json.word) : undefined,
      json.char ? TfidfVectorizer.fromJSON(json.char) : undefined,
      json.descEmbeddings?.map((v) => Float32Array.from(v)),
    );
  }

  toJSON(): FeaturesJson {
    return {
      config: this.config,
      word: this.word?.toJSON(),
      char: this.char?.toJSON(),
      descEmbeddings: this.descEmbeddings?.map((v) => Array.from(v)),
    };
  }

  private blocks(
    text: string,
    embedding: Float32Array | undefined,
  ): { vector: SparseVector; width: number }[] {
    const has = (f: FeatureFamily) => this.config.families.includes(f);
    const out: { vector: SparseVector; width: number }[] = [];
    const empty: SparseVector = { indices: [], values: [] };
    const live = text !== "";
    // One tokenization serves both vectorizers.
    const tokens = live ? tokenize(text) : [];
    const wordVec = this.word && live ? this.word.transformTokens(tokens) : empty;
    if (has("word") && this.word) out.push({ vector: wordVec, width: this.word.dim });
    if (has("char") && this.char)
      out.push({ vector: live ? this.char.transformTokens(tokens) : empty, width: this.char.dim });
    if (has("desc")) {
      const sims = live ? this.descWord.map((d) => dot(wordVec, d)) : [];
      out.push({ vector: live ? sparseFromDense(unit(sims)) : empty, width: DESCRIBED_CODES.length });
    }
    if (has("use")) {
      const dim = this.descEmbeddings?.[0]?.length ?? 0;
      if (live && !embedding) throw new Error("the model uses sentence embeddings: pass one per text");
      out.push({ vector: live && embedding ? sparseFromDense(embedding) : empty, width: dim });
      const sims = live && embedding ? (this.descEmbeddings ?? []).map((d) => dotDense(embedding, d)) : [];
      out.push({ vector: live ? sparseFromDense(unit(sims)) : empty, width: DESCRIBED_CODES.length });
    }
    return out;
  }

  /** The feature vector of one text (with its sentence embedding when the model uses one). */
  vector(text: string, embedding?: Float32Array): SparseVector {
    return concatSparse(this.blocks(text, embedding));
  }
}

function dotDense(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Unit L2 norm; what matters is which descriptions a text is closest to, not the absolute overlap. */
function unit(xs: number[]): number[] {
  const n = Math.hypot(...xs);
  return n > 0 ? xs.map((x) => x / n) : xs;
}
