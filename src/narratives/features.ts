/**
 * Feature families of the narratives classifier, each its own block so no family drowns the others: word n-gram
 * TF-IDF, char n-gram TF-IDF, similarity to the taxonomy descriptions (in TF-IDF space and, with an encoder, in
 * sentence-embedding space), the sentence embedding itself, stance cues (cues.ts: direction words paired with their
 * subject, negation scope) and contrast: for every code, how much closer the text is to the code's proposition than
 * to its mainstream rebuttal (rebuttals.ts), which share a topic and differ in stance.
 */

import { concatSparse, dot, l2Normalise, type SparseVector, sparseFromDense } from "../learning/sparse.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";
import { NARRATIVES } from "../taxonomy/cards.ts";
import { tokenize } from "../text/tokenize.ts";
import { CUE_DIM, cueVector } from "./cues.ts";
import { MARKER_DIM, markerVector } from "./markers.ts";
import { REBUTTALS } from "./rebuttals.ts";

export type FeatureFamily = "word" | "char" | "desc" | "use" | "cues" | "contrast" | "markers";
export const FEATURE_FAMILIES: readonly FeatureFamily[] = [
  "word",
  "char",
  "desc",
  "use",
  "cues",
  "contrast",
  "markers",
];

export interface FeatureConfig {
  families: FeatureFamily[];
  wordMaxFeatures: number;
  charMaxFeatures: number;
}

/** Sentence embeddings of the codes' descriptions and rebuttals, one per code of DESCRIBED_CODES. */
export interface PrototypeEmbeddings {
  descriptions: Float32Array[];
  rebuttals: Float32Array[];
}

export interface FeaturesJson {
  config: FeatureConfig;
  word?: TfidfJson;
  char?: TfidfJson;
  /** Only with "use". */
  descEmbeddings?: number[][];
  rebuttalEmbeddings?: number[][];
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

/** The mainstream statement a code contradicts. */
export function rebuttalText(code: string): string {
  const r = REBUTTALS[code];
  if (!r) throw new Error(`no rebuttal for code ${code}`);
  return r;
}

/** The texts whose embeddings a model with "use" needs, in the order of PrototypeEmbeddings. */
export const prototypeTexts = (): { descriptions: string[]; rebuttals: string[] } => ({
  descriptions: DESCRIBED_CODES.map(descriptionText),
  rebuttals: DESCRIBED_CODES.map(rebuttalText),
});

/** Contrast differences are a few hundredths to a few tenths: scaled so their block is about unit size. */
const CONTRAST_SCALE = 4;

export class NarrativeFeatures {
  readonly config: FeatureConfig;
  private readonly word?: TfidfVectorizer;
  private readonly char?: TfidfVectorizer;
  private readonly descWord: SparseVector[];
  private readonly rebuttalWord: SparseVector[];
  private readonly descCues: SparseVector[];
  private readonly rebuttalCues: SparseVector[];
  private readonly prototypes?: PrototypeEmbeddings;
  /** Total width of the concatenated vector. */
  readonly dim: number;

  private constructor(
    config: FeatureConfig,
    word?: TfidfVectorizer,
    char?: TfidfVectorizer,
    prototypes?: PrototypeEmbeddings,
  ) {
    this.config = config;
    this.word = word;
    this.char = char;
    this.prototypes = prototypes;
    const texts = prototypeTexts();
    this.descWord = word ? texts.descriptions.map((t) => word.transform(t)) : [];
    this.rebuttalWord = word ? texts.rebuttals.map((t) => word.transform(t)) : [];
    const cues = (t: string) => l2Normalise(cueVector(tokenize(t)));
    this.descCues = texts.descriptions.map(cues);
    this.rebuttalCues = texts.rebuttals.map(cues);
    this.dim = this.blocks("", undefined).reduce((s, b) => s + b.width, 0);
  }

  get needsEncoder(): boolean {
    return this.config.families.includes("use");
  }

  /** Fits the vocabularies on the training texts; `prototypes` is required when "use" is a family. */
  static fit(
    texts: readonly string[],
    config: FeatureConfig,
    prototypes?: PrototypeEmbeddings,
  ): NarrativeFeatures {
    const has = (f: FeatureFamily) => config.families.includes(f);
    if (has("use") && !prototypes) throw new Error("the use family needs the prototype embeddings");
    // The word vocabulary also backs the description and contrast similarities.
    const word =
      has("word") || has("desc") || has("contrast")
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
    return new NarrativeFeatures({ ...config }, word, char, has("use") ? prototypes : undefined);
  }

  static fromJSON(json: FeaturesJson): NarrativeFeatures {
    const floats = (rows?: number[][]) => rows?.map((v) => Float32Array.from(v));
    const descriptions = floats(json.descEmbeddings);
    const rebuttals = floats(json.rebuttalEmbeddings);
    return new NarrativeFeatures(
      json.config,
      json.word ? TfidfVectorizer.fromJSON(json.word) : undefined,
      json.char ? TfidfVectorizer.fromJSON(json.char) : undefined,
      descriptions && rebuttals ? { descriptions, rebuttals } : undefined,
    );
  }

  toJSON(): FeaturesJson {
    return {
      config: this.config,
      word: this.word?.toJSON(),
      char: this.char?.toJSON(),
      descEmbeddings: this.prototypes?.descriptions.map((v) => Array.from(v)),
      rebuttalEmbeddings: this.prototypes?.rebuttals.map((v) => Array.from(v)),
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
    const codes = DESCRIBED_CODES.length;
    if (live && has("use") && !embedding)
      throw new Error("the model uses sentence embeddings: pass one per text");
    // One tokenization serves every lexical family.
    const tokens = live ? tokenize(text) : [];
    const wordVec = this.word && live ? this.word.transformTokens(tokens) : empty;
    const cueVec = live && (has("cues") || has("contrast")) ? l2Normalise(cueVector(tokens)) : empty;
    if (has("word") && this.word) out.push({ vector: wordVec, width: this.word.dim });
    if (has("char") && this.char)
      out.push({ vector: live ? this.char.transformTokens(tokens) : empty, width: this.char.dim });
    if (has("desc")) {
      const sims = live ? this.descWord.map((d) => dot(wordVec, d)) : [];
      out.push({ vector: live ? sparseFromDense(unit(sims)) : empty, width: codes });
    }
    if (has("use")) {
      const dim = this.prototypes?.descriptions[0]?.length ?? 0;
      out.push({ vector: live && embedding ? sparseFromDense(embedding) : empty, width: dim });
      const sims =
        live && embedding ? (this.prototypes?.descriptions ?? []).map((d) => dotDense(embedding, d)) : [];
      out.push({ vector: live ? sparseFromDense(unit(sims)) : empty, width: codes });
    }
    if (has("cues")) out.push({ vector: cueVec, width: CUE_DIM });
    if (has("contrast")) {
      const diff = (a: number, b: number) => CONTRAST_SCALE * (a - b);
      const word = live
        ? this.descWord.map((d, k) => diff(dot(wordVec, d), dot(wordVec, this.rebuttalWord[k])))
        : [];
      const cue = live
        ? this.descCues.map((d, k) => diff(dot(cueVec, d), dot(cueVec, this.rebuttalCues[k])))
        : [];
      out.push({ vector: live ? sparseFromDense(word) : empty, width: codes });
      out.push({ vector: live ? sparseFromDense(cue) : empty, width: codes });
      if (has("use")) {
        const p = this.prototypes;
        const use =
          live && embedding && p
            ? p.descriptions.map((d, k) => diff(dotDense(embedding, d), dotDense(embedding, p.rebuttals[k])))
            : [];
        out.push({ vector: live ? sparseFromDense(use) : empty, width: codes });
      }
    }
    // Last, so the blocks of a model without it keep their offsets.
    if (has("markers")) out.push({ vector: live ? markerVector(text) : empty, width: MARKER_DIM });
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
