/**
 * The claim's P(narrative) (does it carry a CARDS disinformation narrative?) as evidence for the verifier's
 * "narrative" pair group: a contrarian claim whose evidence speaks to it is more often refuted.
 *
 * The narratives gate learns from Climate-FEVER claims (SUPPORTS claims as "none", REFUTES claims as "narrative",
 * and their evidence sentences), which are the verifier's own claims, and FLICC repeats some of them (8 of the 398
 * verification dev claims are narratives training rows). So the verifier keeps its own copy of the gate: the
 * shipped fast narratives model's gate (models/narratives/fast.json: its features, settings and Platt scaling)
 * refitted without the verification dev claims and their evidence. The training claims get out-of-fold values:
 * per fold of the verifier's claim folds, the gate refitted also without that fold's claims and their evidence.
 * This module is the inference side; the fitting is fit-claim-narrative.ts (a trainer), which depends on it.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { NARRATIVES_MODEL_DIR, readNarrativeModel } from "../narratives/classifier.ts";
import { type NarrativeModelJson, type Platt, plattProbability, scoringModels } from "../narratives/model.ts";

/** The narratives model file (under models/narratives) the verifier reads P(narrative) from. */
export const CLAIM_NARRATIVE_MODEL = "fast.json";

/** P(narrative) of each text, in order. */
export type ClaimNarrative = (texts: readonly string[]) => Promise<number[]>;

/**
 * The verifier's own copy of the narratives gate, refitted without the verification dev claims (7 of them are
 * FLICC rows, one repeats a train claim), on the features of the narratives model named by `model`, whose
 * fingerprint (sha1 of its features) must match: the gate reads that model's vectors.
 */
export interface ClaimNarrativeJson {
  model: string;
  features: string;
  gate: LogisticJson;
  platt: Platt;
  /** Stance rows of the narratives training left out of this gate (verification dev claims, their evidence). */
  heldOut: number;
}

/** Which narratives features a gate was fitted on (checked at open). */
export const fingerprint = (json: NarrativeModelJson) =>
  createHash("sha1").update(JSON.stringify(json.features)).digest("hex");

/** P(narrative) of claims from the verifier's gate and its narratives model's features; memoised per text. */
export async function openClaimNarrative(
  spec: ClaimNarrativeJson,
  dir = NARRATIVES_MODEL_DIR,
): Promise<ClaimNarrative> {
  const path = join(dir, spec.model);
  const json = await readNarrativeModel(path);
  if (fingerprint(json) !== spec.features)
    throw new DataError(
      path,
      "the verification model's narrative gate was fitted on other narratives features (retrain with `climatecheck-train verification`)",
    );
  const { features } = scoringModels(json);
  const gate = LogisticModel.fromJSON(spec.gate);
  const memo = new Map<string, number>();
  return async (texts) =>
    texts.map((t) => {
      let p = memo.get(t);
      if (p === undefined) {
        p = plattProbability(gate.decision(features.vector(t))[0], spec.platt);
        memo.set(t, p);
      }
      return p;
    });
}
