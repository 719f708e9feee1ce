/** Loads a trained narratives model and classifies texts: features, group and code scores, hierarchy rules. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { codeProbabilities, type DecisionRule, decide } from "./decide.ts";
import {
  NARRATIVES_FORMAT,
  type NarrativeModelJson,
  type ScoringModels,
  scoreVector,
  scoringModels,
  type TextEmbedder,
} from "./model.ts";

export const NARRATIVES_MODEL_DIR = join(MODELS_DIR, "narratives");
/** Every feature family, sentence encoder included. */
export const FULL_MODEL_FILE = "full.json";
/** Lexical and taxonomy features only: no sentence encoder, for speed. */
export const FAST_MODEL_FILE = "fast.json";

export interface NarrativePrediction {
  codes: string[];
  /**
   * Calibrated P(the text carries any narrative); under the `check` rule codes are 0_0 exactly when it is below
   * NARRATIVE_THRESHOLD (under `classify`, below the model's lower classify threshold).
   */
  narrative: number;
  /** Marginal probability per code (see codeProbabilities), 0_0 = 1 - narrative. */
  probabilities: Record<string, number>;
}

/** Reads a model file; a missing or unreadable file is a DataError (the user named it or has not trained). */
export async function readNarrativeModel(path: string): Promise<NarrativeModelJson> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new DataError(path, "narratives model not found (run `climatecheck-train narratives`)");
  }
  try {
    const json = JSON.parse(text) as NarrativeModelJson;
    if (json.format !== NARRATIVES_FORMAT) throw new Error();
    return json;
  } catch {
    throw new DataError(
      path,
      `not a narratives model of this version (expected format ${NARRATIVES_FORMAT}; retrain with \`climatecheck-train narratives\`)`,
    );
  }
}

export class NarrativeClassifier {
  readonly json: NarrativeModelJson;
  private readonly models: ScoringModels;
  private readonly encoder?: TextEmbedder;

  constructor(json: NarrativeModelJson, encoder?: TextEmbedder) {
    if (json.format !== NARRATIVES_FORMAT) throw new Error(`unknown narratives model format ${json.format}`);
    this.json = json;
    this.models = scoringModels(json);
    if (this.models.gate.mlp && !this.models.features.needsEncoder)
      throw new Error("this narratives model's gate reads sentence vectors but its features do not");
    if (this.models.features.needsEncoder && !encoder) {
      throw new Error(
        `this narratives model needs the sentence encoder ${json.encoder}; pass one or use the fast model`,
      );
    }
    this.encoder = encoder;
  }

  get needsEncoder(): boolean {
    return this.models.features.needsEncoder;
  }

  static async load(path: string, encoder?: TextEmbedder): Promise<NarrativeClassifier> {
    const json = await readNarrativeModel(path);
    return new NarrativeClassifier(json, json.encoder ? encoder : undefined);
  }

  /** `rule`: "check" (precision on mainstream text, the default) or "classify" (the shared task's output, decide.ts). */
  async classify(texts: string[], rule: DecisionRule = "check"): Promise<NarrativePrediction[]> {
    const embeddings = this.needsEncoder && this.encoder ? await this.encoder.embed(texts) : undefined;
    return texts.map((text, i) => {
      const embedding = embeddings?.[i];
      const scores = scoreVector(this.models, this.models.features.vector(text, embedding), embedding);
      return {
        codes: decide(scores, this.json.thresholds, this.json.fallback, rule),
        narrative: scores.narrative,
        probabilities: codeProbabilities(scores),
      };
    });
  }
}
