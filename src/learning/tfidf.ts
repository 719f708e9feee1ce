/**
 * TF-IDF over word n-grams or character n-grams (within word boundaries, like scikit-learn's `char_wb`).
 * Words come from the project tokenizer. One vectorizer = one analyzer; concatenate blocks for several.
 */
import { tokenize } from "../text/tokenize.ts";
import type { SparseVector } from "./sparse.ts";

export interface TfidfOptions {
  analyzer: "word" | "char";
  /** Inclusive n-gram range, e.g. [1, 2] for words or [2, 5] for characters. */
  ngram: [number, number];
  /** Keep terms seen in at least this many documents. */
  minDf: number;
  /** Keep at most this many terms (the most frequent by document frequency). */
  maxFeatures?: number;
  /** tf -> 1 + ln(tf). */
  sublinearTf: boolean;
}

export interface TfidfJson {
  options: TfidfOptions;
  terms: string[];
  idf: number[];
}

/** The n-grams of a text under the options (with repeats, so counts are term frequencies). */
export function analyze(text: string, options: Pick<TfidfOptions, "analyzer" | "ngram">): string[] {
  return analyzeTokens(tokenize(text), options);
}

/** The n-grams of already tokenized text (lets several vectorizers share one tokenization). */
export function analyzeTokens(
  tokens: readonly string[],
  options: Pick<TfidfOptions, "analyzer" | "ngram">,
): string[] {
  const [lo, hi] = options.ngram;
  const out: string[] = [];
  if (options.analyzer === "word") {
    for (let n = lo; n <= hi; n++) {
      for (let i = 0; i + n <= tokens.length; i++) out.push(tokens.slice(i, i + n).join(" "));
    }
    return out;
  }
  for (const t of tokens) {
    const w = ` ${t} `;
    for (let n = lo; n <= hi; n++) {
      for (let i = 0; i + n <= w.length; i++) out.push(w.slice(i, i + n));
      if (n >= w.length) break;
    }
  }
  return out;
}

export class TfidfVectorizer {
  readonly options: TfidfOptions;
  private readonly vocab: Map<string, number>;
  private readonly idf: Float32Array;
  readonly terms: readonly string[];

  private constructor(options: TfidfOptions, terms: string[], idf: ArrayLike<number>) {
    this.options = options;
    this.terms = terms;
    this.vocab = new Map(terms.map((t, i) => [t, i]));
    this.idf = Float32Array.from(idf);
  }

  get dim(): number {
    return this.terms.length;
  }

  /** Learns the vocabulary and smoothed idf, ln((1 + n) / (1 + df)) + 1, from the texts. */
  static fit(texts: readonly string[], options: TfidfOptions): TfidfVectorizer {
    const df = new Map<string, number>();
    for (const text of texts) {
      for (const term of new Set(analyze(text, options))) df.set(term, (df.get(term) ?? 0) + 1);
    }
    let kept = [...df.entries()].filter(([, d]) => d >= options.minDf);
    // Deterministic order: by df descending, then by term.
    kept.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    if (options.maxFeatures !== undefined) kept = kept.slice(0, options.maxFeatures);
    const n = texts.length;
    return new TfidfVectorizer(
      { ...options },
      kept.map(([t]) => t),
      kept.map(([, d]) => Math.log((1 + n) / (1 + d)) + 1),
    );
  }

  static fromJSON(json: TfidfJson): TfidfVectorizer {
    if (json.terms.length !== json.idf.length) throw new Error("tfidf: terms and idf lengths differ");
    return new TfidfVectorizer(json.options, json.terms, json.idf);
  }

  toJSON(): TfidfJson {
    return { options: this.options, terms: [...this.terms], idf: Array.from(this.idf) };
  }

  /** The L2-normalised tf-idf vector of a text (terms outside the vocabulary are ignored). */
  transform(text: string): SparseVector {
    return this.transformTokens(tokenize(text));
  }

  /** transform() for tokens from the project tokenizer. */
  transformTokens(tokens: readonly string[]): SparseVector {
    const counts = new Map<number, number>();
    for (const term of analyzeTokens(tokens, this.options)) {
      const i = this.vocab.get(term);
      if (i !== undefined) counts.set(i, (counts.get(i) ?? 0) + 1);
    }
    const indices = Int32Array.from(counts.keys()).sort();
    const values = new Float32Array(indices.length);
    let norm = 0;
    for (let k = 0; k < indices.length; k++) {
      const tf = counts.get(indices[k]) ?? 0;
      const v = (this.options.sublinearTf ? 1 + Math.log(tf) : tf) * this.idf[indices[k]];
      values[k] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let k = 0; k < values.length; k++) values[k] /= norm;
    return { indices, values };
  }
}
