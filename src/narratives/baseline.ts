/**
 * The reference baselines for benchmarks, the strongest plain models: word + char n-gram TF-IDF (optionally with
 * the USE-lite sentence vector) and one binary logistic regression per code (one-vs-rest, 0_0 included), the
 * single most likely code predicted (argmax). No gate, no hierarchy, no taxonomy.
 */
import { type LogisticModel, trainLogistic } from "../learning/logistic.ts";
import { concatSparse, type SparseVector, sparseFromDense } from "../learning/sparse.ts";
import { NARRATIVE_CODES, NO_NARRATIVE } from "../taxonomy/cards.ts";
import type { NarrativeExample } from "../types.ts";
import { NarrativeFeatures } from "./features.ts";

export interface Baseline {
  /** The argmax code, and P(narrative) = 1 - P(0_0) of the 0_0 model. */
  predict(text: string, embedding?: Float32Array): { codes: string[]; narrative: number };
}

/** `embeddings` (text -> sentence vector) adds the sentence vector to the features. */
export function trainBaseline(
  train: readonly NarrativeExample[],
  embeddings?: ReadonlyMap<string, Float32Array>,
  l2 = 1e-4,
): Baseline {
  const features = NarrativeFeatures.fit(
    train.map((e) => e.text),
    { families: ["word", "char"], wordMaxFeatures: 6000, charMaxFeatures: 10000 },
  );
  const useDim = embeddings?.values().next().value?.length ?? 0;
  const dim = features.dim + useDim;
  const vector = (text: string, embedding?: Float32Array): SparseVector => {
    if (!embeddings) return features.vector(text);
    if (!embedding) throw new Error("this baseline uses sentence embeddings: pass one per text");
    return concatSparse([
      { vector: features.vector(text), width: features.dim },
      { vector: sparseFromDense(embedding), width: useDim },
    ]);
  };
  const x = train.map((e) => vector(e.text, embeddings?.get(e.text)));
  const models: { code: string; model: LogisticModel }[] = [];
  for (const code of NARRATIVE_CODES) {
    const y = train.map((e) => (e.codes.includes(code) ? 1 : 0));
    if (!y.includes(1)) continue;
    models.push({ code, model: trainLogistic(x, y, dim, { kind: "binary", classes: 2, l2, maxIter: 150 }) });
  }
  return {
    predict(text, embedding) {
      const v = vector(text, embedding);
      const scored = models.map((m) => ({ code: m.code, p: m.model.predictProba(v)[1] }));
      const best = scored.reduce((a, b) => (b.p > a.p ? b : a));
      const none = scored.find((s) => s.code === NO_NARRATIVE)?.p ?? 0;
      return { codes: [best.code], narrative: 1 - none };
    },
  };
}
