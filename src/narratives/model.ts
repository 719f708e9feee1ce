/** The trained narratives model: its JSON shape and the pure scoring of one feature vector. */
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import type { Fallback, NarrativeScores, Thresholds } from "./decide.ts";
import { type FeaturesJson, NarrativeFeatures } from "./features.ts";

/** What the classifier needs from a sentence encoder (structurally the project's SentenceEncoder). */
export interface TextEmbedder {
  readonly name: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface NarrativeModelJson {
  format: "climatecheck-narratives/1";
  /** Name of the sentence encoder the model was trained with (absent for a model without the "use" family). */
  encoder?: string;
  features: FeaturesJson;
  /** Softmax over groups 0..5. */
  group: LogisticJson;
  /** Per narrative group: softmax over its sub-codes (in this order). */
  codes: Record<string, { codes: string[]; model: LogisticJson }>;
  thresholds: Thresholds;
  fallback: Fallback;
  /** Provenance for the card: training rows per source, settings. */
  trainedOn: Record<string, number>;
  settings: Record<string, unknown>;
}

export interface ScoringModels {
  features: NarrativeFeatures;
  group: LogisticModel;
  codes: Map<number, { codes: string[]; model: LogisticModel }>;
}

export function scoringModels(json: NarrativeModelJson): ScoringModels {
  return {
    features: NarrativeFeatures.fromJSON(json.features),
    group: LogisticModel.fromJSON(json.group),
    codes: new Map(
      Object.entries(json.codes).map(([g, m]) => [
        Number(g),
        { codes: m.codes, model: LogisticModel.fromJSON(m.model) },
      ]),
    ),
  };
}

/** Group probabilities and, for every group, P(code | group). */
export function scoreVector(
  models: Pick<ScoringModels, "group" | "codes">,
  x: SparseVector,
): NarrativeScores {
  const group = Array.from(models.group.predictProba(x));
  const code: Record<string, number> = {};
  for (const { codes, model } of models.codes.values()) {
    const p = model.predictProba(x);
    codes.forEach((c, i) => {
      code[c] = p[i];
    });
  }
  return { group, code };
}
