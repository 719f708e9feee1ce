/**
 * The comparison baseline of the benchmarks: word TF-IDF (1-2 grams) of the claim and of the abstract as two
 * blocks, plus their cosine, into a multinomial logistic regression (tfidf-pair.ts). No sentence selection, no
 * calibration, plain argmax.
 */
import { LABELS } from "../types.ts";
import type { SourcedExample } from "./examples.ts";
import { fitPairVectorizer, fitTfidfPairLR, pairTfidfDim, pairTfidfFeatures } from "./tfidf-pair.ts";
import { decide, probsFromArray, type Verdict } from "./verifier.ts";

export interface Baseline {
  predict(examples: readonly Pick<SourcedExample, "claim" | "sentences" | "title">[]): Verdict[];
}

export function trainBaseline(train: readonly SourcedExample[], l2 = 1e-4): Baseline {
  const tfidf = fitPairVectorizer(train);
  const model = fitTfidfPairLR(
    train.map((e) => pairTfidfFeatures(tfidf, e)),
    train.map((e) => LABELS.indexOf(e.label)),
    pairTfidfDim(tfidf),
    l2,
  );
  return {
    predict: (examples) =>
      examples.map((e) => {
        const probs = probsFromArray(model.predictProba(pairTfidfFeatures(tfidf, e)));
        return { ...decide(probs), rationale: [] };
      }),
  };
}
