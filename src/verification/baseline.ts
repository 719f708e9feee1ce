/**
 * The comparison baseline of the benchmarks: word TF-IDF (1-2 grams) of the claim and of the abstract as two
 * blocks, plus their cosine, into a multinomial logistic regression. No sentence selection, no calibration.
 */
import { trainLogistic } from "../learning/logistic.ts";
import { concatSparse, dot, type SparseVector } from "../learning/sparse.ts";
import { TfidfVectorizer } from "../learning/tfidf.ts";
import { LABELS } from "../types.ts";
import type { SourcedExample } from "./examples.ts";
import { decide, probsFromArray, type Verdict } from "./verifier.ts";

const text = (e: Pick<SourcedExample, "sentences" | "title">) => `${e.title ?? ""} ${e.sentences.join(" ")}`;

export interface Baseline {
  predict(examples: readonly Pick<SourcedExample, "claim" | "sentences" | "title">[]): Verdict[];
}

export function trainBaseline(train: readonly SourcedExample[], l2 = 1e-4): Baseline {
  const tfidf = TfidfVectorizer.fit([...train.map((e) => e.claim), ...train.map(text)], {
    analyzer: "word",
    ngram: [1, 2],
    minDf: 2,
    maxFeatures: 50_000,
    sublinearTf: true,
  });
  const features = (e: Pick<SourcedExample, "claim" | "sentences" | "title">): SparseVector => {
    const c = tfidf.transform(e.claim);
    const a = tfidf.transform(text(e));
    const cos = { indices: Int32Array.of(0), values: Float32Array.of(dot(c, a)) };
    return concatSparse([
      { vector: c, width: tfidf.dim },
      { vector: a, width: tfidf.dim },
      { vector: cos, width: 1 },
    ]);
  };
  const model = trainLogistic(
    train.map(features),
    train.map((e) => LABELS.indexOf(e.label)),
    2 * tfidf.dim + 1,
    { kind: "multinomial", classes: 3, l2 },
  );
  return {
    predict: (examples) =>
      examples.map((e) => {
        const probs = probsFromArray(model.predictProba(features(e)));
        return { ...decide(probs), probs, rationale: [] };
      }),
  };
}
