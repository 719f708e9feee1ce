/** The trained narratives model: its JSON shape and the pure scoring of one feature vector. */
import { type LogisticJson, LogisticModel, sigmoid } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { type Fallback, NARRATIVE_GROUPS, type NarrativeScores, type Thresholds } from "./decide.ts";
import { type FeaturesJson, NarrativeFeatures } from "./features.ts";

/** What the classifier needs from a sentence encoder (structurally the project's SentenceEncoder). */
export interface TextEmbedder {
  readonly name: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export const NARRATIVES_FORMAT = "climatecheck-narratives/2";

/** Platt scaling of the gate's logit: P(narrative) = sigmoid(a z + b), fitted on out-of-fold logits. */
export interface Platt {
  a: number;
  b: number;
}

export interface NarrativeModelJson {
  format: typeof NARRATIVES_FORMAT;
  /** Name of the sentence encoder the model was trained with (absent for a model without the "use" family). */
  encoder?: string;
  features: FeaturesJson;
  /** Binary logistic regression: does the text carry any narrative (stance, not topic)? */
  gate: { model: LogisticJson; platt: Platt };
  /** Softmax over the groups 1..5 (class k = group k + 1), trained on texts that carry a narrative. */
  group: LogisticJson;
  /** Per narrative group: softmax over its sub-codes (in this order). */
  codes: Record<string, { codes: string[]; model: LogisticJson }>;
  thresholds: Thresholds;
  fallback: Fallback;
  /** Provenance for the card: training rows per source, settings. */
  trainedOn: Record<string, number>;
  /** Out-of-fold figures on the training rows: the gate's share of texts given a narrative, per source. */
  crossValidation: {
    /** The threshold on even-odds P(narrative) chosen out of fold and folded into the gate's Platt scaling. */
    threshold: number;
    gate: Record<string, { rows: number; flagged: number; share: number }>;
  };
  settings: Record<string, unknown>;
}

export interface ScoringModels {
  features: NarrativeFeatures;
  gate: { model: LogisticModel; platt: Platt };
  group: LogisticModel;
  codes: Map<number, { codes: string[]; model: LogisticModel }>;
}

export function scoringModels(json: NarrativeModelJson): ScoringModels {
  return {
    features: NarrativeFeatures.fromJSON(json.features),
    gate: { model: LogisticModel.fromJSON(json.gate.model), platt: json.gate.platt },
    group: LogisticModel.fromJSON(json.group),
    codes: new Map(
      Object.entries(json.codes).map(([g, m]) => [
        Number(g),
        { codes: m.codes, model: LogisticModel.fromJSON(m.model) },
      ]),
    ),
  };
}

/** Calibrated P(narrative) of a raw gate logit. */
export const plattProbability = (z: number, p: Platt): number => sigmoid(p.a * z + p.b);

/** P(narrative), P(group | narrative) and, for every group, P(code | group). */
export function scoreVector(models: Omit<ScoringModels, "features">, x: SparseVector): NarrativeScores {
  const narrative = plattProbability(models.gate.model.decision(x)[0], models.gate.platt);
  const pg = models.group.predictProba(x);
  const group = [0, ...NARRATIVE_GROUPS.map((g) => pg[g - 1])];
  const code: Record<string, number> = {};
  for (const { codes, model } of models.codes.values()) {
    const p = model.predictProba(x);
    codes.forEach((c, i) => {
      code[c] = p[i];
    });
  }
  return { narrative, group, code };
}
