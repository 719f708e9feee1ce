/**
 * Fitting the verifier's copy of the narratives gate (claim-narrative.ts reads it at inference): refitted without the
 * verification dev claims and their evidence, with out-of-fold values for the training claims. A trainer: only
 * training and benchmarks import it.
 */
import { join } from "node:path";
import { DataError } from "../data/errors.ts";
import type { LogisticModel } from "../learning/logistic.ts";
import { NARRATIVES_MODEL_DIR, readNarrativeModel } from "../narratives/classifier.ts";
import { loadNarrativeData, type StanceExample, splitKey } from "../narratives/data.ts";
import { prototypeTexts } from "../narratives/features.ts";
import { plattProbability, scoringModels } from "../narratives/model.ts";
import { fitGate, gateWeights, type Row } from "../narratives/train.ts";
import { CLAIM_NARRATIVE_MODEL, type ClaimNarrativeJson, fingerprint } from "./claim-narrative.ts";
import type { SourcedExample } from "./examples.ts";

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
