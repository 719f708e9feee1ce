/**
 * The pair-level TF-IDF signal: word 1-2 gram TF-IDF of the claim and of the whole abstract (title + sentences)
 * as two blocks plus their cosine, into a multinomial logistic regression. It is the benchmark baseline on its
 * own, and the built-in verifier stacks its out-of-fold probabilities into the pair model (it sees the whole
 * abstract, which the sentence selector may miss).
 */
import { type LogisticJson, LogisticModel, trainLogistic } from "../learning/logistic.ts";
import { concatSparse, dot, type SparseVector } from "../learning/sparse.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";

export interface PairText {
  claim: string;
  title?: string;
  sentences: readonly string[];
}

export interface TfidfPairJson {
  vectorizer: TfidfJson;
  model: LogisticJson;
}

const abstractText = (e: PairText) => `${e.title ?? ""} ${e.sentences.join(" ")}`;

export function fitPairVectorizer(texts: readonly PairText[], maxFeatures = 50_000): TfidfVectorizer {
  return TfidfVectorizer.fit([...texts.map((e) => e.claim), ...texts.map(abstractText)], {
    analyzer: "word",
    ngram: [1, 2],
    minDf: 2,
    maxFeatures,
    sublinearTf: true,
  });
}

export function pairTfidfFeatures(tfidf: TfidfVectorizer, e: PairText): SparseVector {
  const c = tfidf.transform(e.claim);
  const a = tfidf.transform(abstractText(e));
  const cos = { indices: Int32Array.of(0), values: Float32Array.of(dot(c, a)) };
  return concatSparse([
    { vector: c, width: tfidf.dim },
    { vector: a, width: tfidf.dim },
    { vector: cos, width: 1 },
  ]);
}

export const pairTfidfDim = (tfidf: TfidfVectorizer) => 2 * tfidf.dim + 1;

/** Fits the LR on pre-built features (labels in LABELS order). */
export function fitTfidfPairLR(x: readonly SparseVector[], y: readonly number[], dim: number, l2 = 1e-4) {
  return trainLogistic(x, y, dim, { kind: "multinomial", classes: 3, l2 });
}

export class TfidfPairModel {
  readonly tfidf: TfidfVectorizer;
  readonly model: LogisticModel;

  constructor(json: TfidfPairJson) {
    this.tfidf = TfidfVectorizer.fromJSON(json.vectorizer);
    this.model = LogisticModel.fromJSON(json.model);
  }

  /** P(Supports, Refutes, NEI) of one pair. */
  probs(e: PairText): Float32Array {
    return this.model.predictProba(pairTfidfFeatures(this.tfidf, e));
  }
}
