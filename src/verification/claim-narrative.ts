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
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { NARRATIVES_MODEL_DIR, readNarrativeModel } from "../narratives/classifier.ts";
import { loadNarrativeData, type StanceExample, splitKey } from "../narratives/data.ts";
import { prototypeTexts } from "../narratives/features.ts";
import { type NarrativeModelJson, type Platt, plattProbability, scoringModels } from "../narratives/model.ts";
import { fitGate, gateWeights, type Row } from "../narratives/train.ts";
import type { SourcedExample } from "./examples.ts";

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

const fingerprint = (json: NarrativeModelJson) =>
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
      "the verification model's narrative gate was fitted on other narratives features (retrain with `climatecheck train verification`)",
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

/** The verifier claim a narratives stance row comes from ("cf:ID" for a claim, "cf:ID:EVIDENCE" for evidence). */
const verifierClaimOf = (rowId: string): string | undefined =>
  rowId.startsWith("cf:") ? rowId.split(":").slice(0, 2).join(":") : undefined;

/** The side of a stance row that no verifier gate may see. */
export const DEV_SIDE = -2;

/**
 * Per narratives stance row, which gates must not see it: DEV_SIDE (none: a verification dev claim, one of its
 * Climate-FEVER evidence sentences, or a row of the same text), a train fold (that fold's gate: the row is a claim of
 * the fold, its evidence, or the same text as one of its claims), or -1 (every gate may).
 */
export function stanceRowSides(
  stance: readonly Pick<StanceExample, "id" | "text">[],
  train: readonly Pick<SourcedExample, "claimId" | "claim">[],
  dev: readonly Pick<SourcedExample, "claimId" | "claim" | "source" | "sentences">[],
  foldOf: (claimId: string) => number,
): number[] {
  const textSide = new Map<string, number>();
  for (const e of train) textSide.set(splitKey(e.claim), foldOf(e.claimId));
  for (const e of dev) {
    textSide.set(splitKey(e.claim), DEV_SIDE);
    if (e.source === "climate-fever") for (const s of e.sentences) textSide.set(splitKey(s), DEV_SIDE);
  }
  const claimSide = new Map<string, number>([
    ...train.map((e): [string, number] => [e.claimId, foldOf(e.claimId)]),
    ...dev.map((e): [string, number] => [e.claimId, DEV_SIDE]),
  ]);
  return stance.map((e) => {
    const claim = verifierClaimOf(e.id);
    const byText = textSide.get(splitKey(e.text));
    if (byText === DEV_SIDE) return DEV_SIDE;
    return (claim !== undefined ? claimSide.get(claim) : undefined) ?? byText ?? -1;
  });
}

export interface FitOptions {
  dataDir?: string;
  /** The narratives model (under models/narratives) whose features, settings and Platt scaling the gates share. */
  model?: string;
  dir?: string;
  log?: (message: string) => void;
}

/**
 * The verifier's narrative gate and, for each training example, its claim's out-of-fold P(narrative) (`foldOf`
 * gives the verifier's fold of a claim id). Every gate is the narratives model's, refitted on its stance rows less
 * the verification dev claims, their evidence sentences and any row of the same text; a fold's gate also leaves
 * out that fold's claims and their evidence.
 */
export async function fitClaimNarrative(
  train: readonly SourcedExample[],
  dev: readonly SourcedExample[],
  folds: number,
  foldOf: (claimId: string) => number,
  options: FitOptions = {},
): Promise<{ json: ClaimNarrativeJson; outOfFold: number[] }> {
  const log = options.log ?? (() => {});
  const model = options.model ?? CLAIM_NARRATIVE_MODEL;
  const path = join(options.dir ?? NARRATIVES_MODEL_DIR, model);
  const json = await readNarrativeModel(path);
  if (json.encoder)
    throw new DataError(path, "the verifier's narrative gate needs a model without a sentence encoder");
  const { features, gate } = scoringModels(json);
  const stance = (await loadNarrativeData(options.dataDir)).stanceTrain;
  const settings = json.settings as { descWeight?: number; gate?: { l2: number; noneWeight: number } };
  const l2 = settings.gate?.l2 ?? 1e-4;
  const noneWeight = settings.gate?.noneWeight ?? 1;
  const descWeight = settings.descWeight ?? 2;
  const proto = prototypeTexts();
  const prototypes: Row[] = json.features.config.families.includes("desc")
    ? [
        ...proto.descriptions.map((t) => ({ x: features.vector(t), y: 1, w: descWeight, fold: -1 })),
        ...proto.rebuttals.map((t) => ({ x: features.vector(t), y: 0, w: descWeight, fold: -1 })),
      ]
    : [];
  const vectors = stance.map((e) => features.vector(e.text));
  const rowSide = stanceRowSides(stance, train, dev, foldOf);
  const fit = (skip: number): LogisticModel => {
    const keep = stance.flatMap((_, i) => (rowSide[i] === DEV_SIDE || rowSide[i] === skip ? [] : [i]));
    const weights = gateWeights(
      keep.map((i) => stance[i]),
      noneWeight,
    );
    const rows: Row[] = keep.map((i, k) => ({
      x: vectors[i],
      y: stance[i].narrative ? 1 : 0,
      w: weights[k],
      fold: 0,
    }));
    return fitGate([...rows, ...prototypes], features.dim, l2);
  };
  const outOfFold = new Array<number>(train.length);
  for (let f = 0; f < folds; f++) {
    const m = fit(f);
    const memo = new Map<string, number>();
    train.forEach((e, i) => {
      if (foldOf(e.claimId) !== f) return;
      let p = memo.get(e.claim);
      if (p === undefined) {
        p = plattProbability(m.decision(features.vector(e.claim))[0], gate.platt);
        memo.set(e.claim, p);
      }
      outOfFold[i] = p;
    });
    log(`narrative gate fold ${f + 1}/${folds}`);
  }
  const heldOut = rowSide.filter((s) => s === DEV_SIDE).length;
  log(`narrative gate: ${heldOut} stance rows held out for the verification dev claims`);
  return {
    json: { model, features: fingerprint(json), gate: fit(-3).toJSON(), platt: gate.platt, heldOut },
    outOfFold,
  };
}
