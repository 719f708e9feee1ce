/**
 * The reference baseline for benchmarks: word + char TF-IDF and one binary logistic regression per code
 * (one-vs-rest), codes with P >= 0.5, else the single most likely code. No hierarchy, no taxonomy.
 */
import { type LogisticModel, trainLogistic } from "../learning/logistic.ts";
import { canonicalCodeSet, NARRATIVE_CODES } from "../taxonomy/cards.ts";
import type { NarrativeExample } from "../types.ts";
import { NarrativeFeatures } from "./features.ts";

export interface Baseline {
  predict(text: string): string[];
}

export function trainBaseline(train: readonly NarrativeExample[], l2 = 1e-4): Baseline {
  const features = NarrativeFeatures.fit(
    train.map((e) => e.text),
    { families: ["word", "char"], wordMaxFeatures: 6000, charMaxFeatures: 10000 },
  );
  const x = train.map((e) => features.vector(e.text));
  const models: { code: string; model: LogisticModel }[] = [];
  for (const code of NARRATIVE_CODES) {
    const y = train.map((e) => (e.codes.includes(code) ? 1 : 0));
    if (!y.includes(1)) continue;
    models.push({
      code,
      model: trainLogistic(x, y, features.dim, { kind: "binary", classes: 2, l2, maxIter: 150 }),
    });
  }
  return {
    predict(text: string): string[] {
      const v = features.vector(text);
      const scored = models.map((m) => ({ code: m.code, p: m.model.predictProba(v)[1] }));
      const chosen = scored.filter((s) => s.p >= 0.5).map((s) => s.code);
      if (chosen.length > 0) return canonicalCodeSet(chosen);
      return [scored.reduce((a, b) => (b.p > a.p ? b : a)).code];
    },
  };
}
