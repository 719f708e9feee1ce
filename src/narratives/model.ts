/** The trained narratives model: its JSON shape and the pure scoring of one feature vector. */
import { type LogisticJson, LogisticModel, sigmoid } from "../learning/logistic.ts";
import { Mlp, type MlpJson } from "../learning/mlp.ts";
import type { SparseVector } from "../learning/sparse.ts";
import {
  type ClassifyCodes,
  type Fallback,
  NARRATIVE_GROUPS,
  type NarrativeScores,
  type Thresholds,
} from "./decide.ts";
import { type FeaturesJson, NarrativeFeatures } from "./features.ts";

/** What the classifier needs from a sentence encoder (structurally the project's SentenceEncoder). */
export interface TextEmbedder {
  readonly name: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** 3: the full model's gate may carry an MLP (gate.mlp), which code for format 2 would silently ignore. */
export const NARRATIVES_FORMAT = "climatecheck-narratives/3";

/** Platt scaling of the gate's logit: P(narrative) = sigmoid(a z + b), fitted on out-of-fold logits. */
export interface Platt {
  a: number;
  b: number;
}

/** Mean and standard deviation of a gate score over the out-of-fold rows: (z - mean) / sd standardises it. */
export interface Scale {
  mean: number;
  sd: number;
}

/**
 * The full model's second gate reader: an MLP on the raw sentence vector. The gate's score is then the sum of the
 * standardised linear and MLP logits, and the Platt scaling applies to that sum.
 */
export interface GateMlpJson {
  model: MlpJson;
  linear: Scale;
  mlp: Scale;
}

export interface NarrativeModelJson {
  format: typeof NARRATIVES_FORMAT;
  /** Name of the sentence encoder the model was trained with (absent for a model without the "use" family). */
  encoder?: string;
  features: FeaturesJson;
  /** Binary logistic regression: does the text carry any narrative (stance, not topic)? */
  gate: { model: LogisticJson; platt: Platt; mlp?: GateMlpJson };
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
    /** The worst ratio of a cell's out-of-fold error to its allowance at the shipped gate (see gateWorstRatio). */
    worst?: number;
    /** The linear gate alone, when the trainer also tried the MLP: the same figures, and whether the MLP shipped. */
    linear?: {
      threshold: number;
      gate: Record<string, { rows: number; flagged: number; share: number }>;
      worst: number;
    };
    mlpShipped?: boolean;
    /** Whether GWSD joined the gate, and the linear gate's worst ratios with and without it when cross-validated. */
    gwsd?: { used: boolean; worstWith?: number; worstWithout?: number };
    /** The classify rule's threshold on P(narrative), its out-of-fold CARDS mean F1, and that at the check rule's. */
    classify?: { threshold: number; codes?: ClassifyCodes; cardsMeanF1: number; cardsMeanF1AtCheck: number };
  };
  settings: Record<string, unknown>;
}

/** The gate's MLP on the sentence vector, and the scales that standardise both logits before they are summed. */
export interface GateMlp {
  model: Mlp;
  linear: Scale;
  mlp: Scale;
}

export interface ScoringGate {
  model: LogisticModel;
  platt: Platt;
  mlp?: GateMlp;
}

export interface ScoringModels {
  features: NarrativeFeatures;
  gate: ScoringGate;
  group: LogisticModel;
  codes: Map<number, { codes: string[]; model: LogisticModel }>;
}

export function scoringModels(json: NarrativeModelJson): ScoringModels {
  return {
    features: NarrativeFeatures.fromJSON(json.features),
    gate: {
      model: LogisticModel.fromJSON(json.gate.model),
      platt: json.gate.platt,
      mlp: json.gate.mlp && { ...json.gate.mlp, model: Mlp.fromJSON(json.gate.mlp.model) },
    },
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

/** The sum of standardised scores the gate's Platt scaling reads, given the two raw logits. */
export const combinedGateScore = (linear: number, mlp: number, s: { linear: Scale; mlp: Scale }): number =>
  (linear - s.linear.mean) / s.linear.sd + (mlp - s.mlp.mean) / s.mlp.sd;

/**
 * The score the gate's Platt scaling applies to: the linear logit, or with an MLP the sum of the standardised
 * linear and MLP logits (the MLP reads `sentence`, the text's raw sentence vector).
 */
export function gateScore(gate: ScoringGate, x: SparseVector, sentence?: Float32Array): number {
  const linear = gate.model.decision(x)[0];
  if (!gate.mlp) return linear;
  if (!sentence) throw new Error("this narratives gate reads the sentence vector: pass one per text");
  return combinedGateScore(linear, gate.mlp.model.decision(sentence), gate.mlp);
}

/**
 * P(narrative), P(group | narrative) and, for every group, P(code | group). `sentence` is the text's raw sentence
 * vector, needed when the gate has an MLP.
 */
export function scoreVector(
  models: Omit<ScoringModels, "features">,
  x: SparseVector,
  sentence?: Float32Array,
): NarrativeScores {
  const narrative = plattProbability(gateScore(models.gate, x, sentence), models.gate.platt);
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
