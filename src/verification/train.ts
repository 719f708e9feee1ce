/**
 * Training of the built-in verifier from SciFact and Climate-FEVER train splits (by claim id). Out-of-fold
 * predictions keep every later stage honest: the pair models learn from TF-IDF (and, as an ablation, stance)
 * probabilities of models that did not see the pair, and each kind's temperature and decision weights are fitted
 * on out-of-fold pair logits.
 * The dev split is never seen in training; it is only scored.
 */

import { trainingFiles } from "../data/paths.ts";
import { readClimateFever, readSciFactClaims, readSciFactCorpus } from "../data/training-sets.ts";
import { scoreVerification, type VerificationScores, verificationF1 } from "../evaluation/metrics.ts";
import { expectedCalibrationError, fitTemperature, softmaxWithTemperature } from "../learning/calibration.ts";
import { argmax, tuneDecisionWeights, weightedArgmax } from "../learning/decision-weights.ts";
import { trainLogistic } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { claimFolds, linkedGroups } from "../learning/split.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { LABELS, type Label, NEI } from "../types.ts";
import type { ClaimNarrativeJson } from "./claim-narrative.ts";
import {
  climateFeverExamples,
  type Source,
  type SourcedExample,
  sciFactExamples,
  splitByClaim,
} from "./examples.ts";
import {
  ALL_FAMILIES,
  type CandidateScore,
  DEFAULT_PAIR_GROUPS,
  type Family,
  type PairGroup,
  pairDim,
  pairFeatures,
  stanceDim,
  stanceFeatures,
} from "./features.ts";
import { IdfTable } from "./idf.ts";
import { profile, profileMemo } from "./lexical.ts";
import {
  type Embed,
  foldedLogits,
  KINDS,
  type Kind,
  kindOf,
  MODEL_FORMAT,
  type PairPartJson,
  pairCues,
  selectCandidates,
  type VerificationModel,
  type VerificationModelJson,
} from "./model.ts";
import { loadOwnData } from "./own-data.ts";
import { fitPairVectorizer, fitTfidfPairLR, pairTfidfDim, pairTfidfFeatures } from "./tfidf-pair.ts";
import type { Verdict } from "./verifier.ts";

export interface VerificationData {
  train: SourcedExample[];
  dev: SourcedExample[];
}

/**
 * SciFact (1 similar non-evidence abstract per claim as extra NEI) and Climate-FEVER, split by claim id, then our
 * own pairs (own-data.ts: judged train claims and written claims to train, judged dev claims to score) unless
 * `ownDir` is false. `ownDir` is the folder holding judged/ and abstract-claims/ (default the repository's data/).
 */
export async function loadVerificationData(dir?: string, ownDir?: string | false): Promise<VerificationData> {
  const f = trainingFiles(dir);
  const [corpus, claims, fever, own] = await Promise.all([
    readSciFactCorpus(f.scifactCorpus),
    readSciFactClaims(f.scifactClaims),
    readClimateFever(f.climateFever),
    ownDir === false ? { train: [], dev: [] } : loadOwnData(ownDir),
  ]);
  const all = [...sciFactExamples(claims, corpus, { similarNei: 1 }), ...climateFeverExamples(fever)];
  const split = dropLeaks(splitByClaim(all));
  return { train: [...split.train, ...own.train], dev: [...split.dev, ...own.dev] };
}

/**
 * Weight of each source's pairs in the pair model fits (1 when absent; 0 leaves a source out). build.ts chooses the
 * weight of our own pairs by cross-validation (source-weights.ts); this default is its last choice (CARD.md).
 */
export const SOURCE_WEIGHTS: Readonly<Partial<Record<Source, number>>> = { own: 0.1 };

const claimKey = (claim: string) => claim.toLowerCase().replace(/\W+/g, " ").trim();

/**
 * The abstract a pair's claim was written from, when it was: SciFact writes a refuted claim as the negation of a
 * supported one on the same abstract, and our written claims come three to an abstract. Such siblings must never sit
 * on both sides of a split or a fold (judged pairs and Climate-FEVER claims were not written from their evidence).
 */
const writtenFrom = (e: { source?: string; judged?: boolean; abstractId?: string }): string | undefined =>
  e.source === "scifact" || (e.source === "own" && !e.judged) ? `${e.source}:${e.abstractId}` : undefined;

/**
 * Some claims come twice under different ids (38 train pairs repeat a dev claim's text); those train pairs are
 * dropped so no dev claim is seen in training. A train pair written from the abstract of a dev pair (writtenFrom)
 * tells the model that dev pair's answer (the wrong way round for a negated sibling), so those train pairs are
 * dropped too. The dev side stays as split, so dev figures stay comparable.
 */
export function dropLeaks<
  T extends { claim: string; source?: string; judged?: boolean; abstractId?: string },
>(split: { train: T[]; dev: T[] }): { train: T[]; dev: T[] } {
  const devClaims = new Set(split.dev.map((e) => claimKey(e.claim)));
  const devAbstracts = new Set(split.dev.map(writtenFrom).filter((k) => k !== undefined));
  return {
    train: split.train.filter((e) => {
      const from = writtenFrom(e);
      return !devClaims.has(claimKey(e.claim)) && !(from && devAbstracts.has(from));
    }),
    dev: split.dev,
  };
}

/**
 * The fold group of each train pair: its claim, joined with every pair written from the same abstract
 * (writtenFrom), so no out-of-fold model sees a held-out pair's sibling.
 */
export function foldGroups(
  train: readonly Pick<SourcedExample, "source" | "judged" | "claimId" | "abstractId">[],
): string[] {
  return linkedGroups(
    train.map((e) => {
      const from = writtenFrom(e);
      return from ? [e.claimId, from] : [e.claimId];
    }),
  );
}

export interface TrainOptions {
  /** Sentence encoder; needed only when the stance model is fitted. */
  embed?: Embed;
  encoderName?: string;
  families?: Family[];
  /** Rationale candidates per abstract (the sentences a stance model would encode). */
  candidates?: number;
  /** Folds of the out-of-fold predictions. */
  folds?: number;
  /**
   * Fit the sentence-encoder stance model too, so refit() can try pair groups with "stance" (ablations). Default:
   * only when `pairGroups` has that group.
   */
  stance?: boolean;
  stanceL2?: number;
  /** L-BFGS iterations of the stance model (the costly fit; fewer for quick ablations). */
  stanceMaxIter?: number;
  pairL2?: number;
  /** Pair feature groups (ablations switch groups off); default DEFAULT_PAIR_GROUPS. */
  pairGroups?: PairGroup[];
  /** Weight of the NEI -> Supports share subtracted from weighted F1 when the decision weights are tuned. */
  neiSupportsPenalty?: number;
  /** Weight of Refutes F1 added to that objective (default 0.25). */
  refutesBonus?: number;
  /** Sample weight of each source's pairs in the pair model fits (default SOURCE_WEIGHTS). */
  sourceWeights?: Partial<Record<Source, number>>;
  /**
   * Per training example, its claim's P(narrative) from a narratives gate that did not see the claim
   * (claim-narrative.ts outOfFoldClaimNarrative); needed for the "narrative" pair group.
   */
  claimNarrative?: readonly number[];
  /** The gate that gives P(narrative) at inference (claim-narrative.ts fitClaimNarrative), stored in the model. */
  narrativeGate?: ClaimNarrativeJson;
  log?: (message: string) => void;
}

export interface CalibrationReport {
  temperature: Record<Kind, number>;
  classWeights: Record<Kind, [number, number, number]>;
  foldedTemperature: Record<Kind, number>;
  /**
   * Out-of-fold (train) expected calibration error: raw, after temperature scaling, and of the probabilities shown
   * (decision weights folded in and re-calibrated).
   */
  eceBefore: number;
  eceScaled: number;
  eceAfter: number;
  /** Out-of-fold (train) weighted F1 per kind, with the tuned decision. */
  oofF1: Record<Kind, number>;
  /** Selector: share of gold rationale sentences among the candidates (SciFact train evidence pairs). */
  selectorRecall: number;
  /** Out-of-fold label of every train pair (the shown argmax), for per-source cross-validation figures. */
  oofLabels: Label[];
}

const labelIndex = (l: Label) => LABELS.indexOf(l);

/** A kind of abstract with fewer train pairs than this shares the pair model fitted on all pairs. */
const MIN_KIND_PAIRS = 30;

const weightedF1 = (pred: readonly Label[], gold: readonly Label[]) => verificationF1(pred, gold).weighted;

/** Share of gold NEI pairs predicted Supports (the shared task's most common error). */
export function neiAsSupportsShare(gold: readonly Label[], pred: readonly Label[]): number {
  let nei = 0;
  let asSupports = 0;
  gold.forEach((g, i) => {
    if (g !== NEI) return;
    nei++;
    if (pred[i] === "Supports") asSupports++;
  });
  return nei ? asSupports / nei : 0;
}

/**
 * Decision weights for one kind, tuned on out-of-fold calibrated probabilities: weighted F1 plus `refutesBonus` x
 * Refutes F1, minus `penalty` per point of gold NEI pairs called Supports beyond the TF-IDF model's own
 * out-of-fold share (so never worse than it there), or beyond `allowedScale` x that share (a stricter rule).
 */
export function tuneDecision(
  calibrated: readonly ArrayLike<number>[],
  gold: readonly Label[],
  tfidfOof: readonly ArrayLike<number>[],
  o: { penalty: number; refutesBonus: number; allowedScale?: number },
): [number, number, number] {
  const allowed =
    (o.allowedScale ?? 1) *
    neiAsSupportsShare(
      gold,
      tfidfOof.map((p) => LABELS[weightedArgmax(p, [1, 1, 1])]),
    );
  const objective = (d: number[]) => {
    const pred = d.map((k) => LABELS[k]);
    const f1 = verificationF1(pred, gold);
    return (
      f1.weighted +
      o.refutesBonus * f1.refutes -
      o.penalty * Math.max(0, neiAsSupportsShare(gold, pred) - allowed)
    );
  };
  return tuneDecisionWeights(calibrated, objective, 3).weights as [number, number, number];
}

export interface RefitOptions {
  neiSupportsPenalty?: number;
  /** Weight of Refutes F1 added to the decision objective (the hardest label, and the one users need most). */
  refutesBonus?: number;
  tuneWeights?: boolean;
  /** One pair model for both kinds (an ablation: the kinds then share weights, temperature and decision). */
  sharedKinds?: boolean;
  /** The direction check at inference (model.ts contrastGuard); default on, off for its ablation. */
  contrastGuard?: boolean;
  /** Sample weight of each source's pairs in the pair fits (default the training options'). */
  sourceWeights?: Partial<Record<Source, number>>;
  /**
   * A pair model of its own for abstracts of the built-in corpus (kind "builtin"), fitted on our own pairs with the
   * other sources at `others` (sample weight; 0 leaves them out), its temperature and decision weights fitted on the
   * out-of-fold predictions of the judged own pairs (claims as people post them). Absent: no such kind.
   */
  builtinKind?: { others: number };
}

export interface TrainedVerification {
  model: VerificationModelJson;
  calibration: CalibrationReport;
  /** The pair stage again with other groups or decision options, on the same out-of-fold inputs (ablations). */
  refit(
    groups: readonly PairGroup[],
    options?: RefitOptions,
  ): { model: VerificationModelJson; calibration: CalibrationReport };
}

export async function trainVerificationModel(
  train: readonly SourcedExample[],
  options: TrainOptions = {},
): Promise<TrainedVerification> {
  const log = options.log ?? (() => {});
  const families = options.families ?? [...ALL_FAMILIES];
  const K = options.candidates ?? 3;
  const folds = options.folds ?? 5;
  const stanceL2 = options.stanceL2 ?? 1e-3;
  const pairL2 = options.pairL2 ?? 1e-1;
  const defaultGroups = options.pairGroups ?? [...DEFAULT_PAIR_GROUPS];
  const withStance = options.stance ?? defaultGroups.includes("stance");
  const foldGroup = foldGroups(train);

  // 0. Text profiles once; document frequencies over the distinct train texts (claims and sentences).
  const memo = profileMemo();
  const profileOf = memo.of;
  // The stages below the pair model (idf, selector, TF-IDF) learn from SciFact and Climate-FEVER only: with our own
  // pairs in them, SciFact's and Climate-FEVER's out-of-fold F1 fell 0.04 whatever their weight in the pair model.
  const stacked = (e: SourcedExample) => e.source !== "own";
  for (const e of train.filter(stacked)) for (const t of [e.claim, ...e.sentences]) profileOf(t);
  const idf = IdfTable.fit(memo.profiles());
  const cues = train.map((e) =>
    pairCues(profileOf(e.claim), e.sentences.map(profileOf), e.title ? profile(e.title) : undefined, idf),
  );
  const lexical = cues.map((c) => c.lexical);
  log(`idf: ${Object.keys(idf.json.keys).length} keys over ${idf.json.documents} texts`);

  // 1. Selector: is a sentence a rationale? (SciFact evidence abstracts, the only multi-sentence gold).
  const selX: Float32Array[] = [];
  const selY: number[] = [];
  train.forEach((e, i) => {
    if (e.source !== "scifact" || e.label === NEI) return;
    const rationale = new Set(e.rationale);
    lexical[i].forEach((x, s) => {
      selX.push(Float32Array.from(x));
      selY.push(rationale.has(s) ? 1 : 0);
    });
  });
  const selector = trainLogistic(selX, selY, selX[0].length, {
    kind: "binary",
    classes: 2,
    l2: 1e-3,
    classWeight: "balanced",
  });
  const candidates = train.map((_, i) => selectCandidates(selector, lexical[i], K));
  let found = 0;
  let wanted = 0;
  train.forEach((e, i) => {
    if (e.source !== "scifact" || e.label === NEI) return;
    const picked = new Set(candidates[i].map((c) => c.index));
    for (const r of e.rationale) {
      wanted++;
      if (picked.has(r)) found++;
    }
  });
  const selectorRecall = wanted ? found / wanted : 0;
  log(`selector: ${selX.length} sentences, rationale recall@${K} ${selectorRecall.toFixed(3)}`);

  // 2. Optional stance model, out of fold: the pair model then learns from stances of models that did not see it.
  const stance = withStance ? await fitStanceModel() : undefined;
  const oofCandidates: CandidateScore[][] = stance?.oofCandidates ?? candidates;

  async function fitStanceModel() {
    if (!options.embed || !options.encoderName) throw new Error("the stance model needs a sentence encoder");
    // Candidates (NEI unless a rationale) plus the gold rationale sentences.
    const rows: { pair: number; sentence: number; label: number }[] = [];
    train.forEach((e, i) => {
      const rationale = new Set(e.rationale);
      const sentences = new Set([...candidates[i].map((c) => c.index), ...e.rationale]);
      for (const s of sentences)
        rows.push({ pair: i, sentence: s, label: labelIndex(rationale.has(s) ? e.label : NEI) });
    });
    const texts = [
      ...new Set([...train.map((e) => e.claim), ...rows.map((s) => train[s.pair].sentences[s.sentence])]),
    ];
    log(`encoding ${texts.length} texts`);
    const vectors = await options.embed(texts);
    const vec = new Map(texts.map((t, i) => [t, vectors[i]]));
    const rawX = rows.map((s) => {
      const e = train[s.pair];
      return stanceFeatures(
        families,
        vec.get(e.claim) as Float32Array,
        vec.get(e.sentences[s.sentence]) as Float32Array,
        lexical[s.pair][s.sentence],
      );
    });
    const standardiser = fitStandardiser(rawX);
    const X = rawX.map((x) => standardise(x, standardiser));
    const Y = rows.map((s) => s.label);
    const dim = stanceDim(families, vectors[0]?.length ?? 0);
    const fit = (idx: number[]) =>
      trainLogistic(
        idx.map((i) => X[i]),
        idx.map((i) => Y[i]),
        dim,
        {
          kind: "multinomial",
          classes: 3,
          l2: stanceL2,
          classWeight: "balanced",
          maxIter: options.stanceMaxIter ?? 150,
        },
      );
    const oof: Float32Array[] = new Array(rows.length);
    claimFolds(
      rows.map((s) => foldGroup[s.pair]),
      folds,
    ).forEach((split, f) => {
      const m = fit(split.fit);
      for (const i of split.held) oof[i] = m.predictProba(X[i]);
      log(`stance fold ${f + 1}/${folds}: ${split.fit.length} fit, ${split.held.length} held out`);
    });
    const bySentence = new Map(rows.map((s, i) => [`${s.pair}:${s.sentence}`, oof[i]]));
    return {
      json: { standardiser, model: fit(rows.map((_, i) => i)).toJSON() },
      oofCandidates: train.map((_, i) =>
        candidates[i].map((c) => ({ ...c, stance: bySentence.get(`${i}:${c.index}`) as Float32Array })),
      ),
    };
  }

  // 3. Pair-level TF-IDF model: out-of-fold probabilities for the pair model, final fit for inference.
  const tfidf = fitPairVectorizer(train.filter(stacked));
  const tfX: SparseVector[] = train.map((e) => pairTfidfFeatures(tfidf, e));
  const pairY = train.map((e) => labelIndex(e.label));
  const oofTfidf: Float32Array[] = new Array(train.length);
  claimFolds(foldGroup, folds).forEach((split, f) => {
    const fit = split.fit.filter((i) => stacked(train[i]));
    const m = fitTfidfPairLR(
      fit.map((i) => tfX[i]),
      fit.map((i) => pairY[i]),
      pairTfidfDim(tfidf),
    );
    for (const i of split.held) if (stacked(train[i])) oofTfidf[i] = m.predictProba(tfX[i]);
    log(`tfidf fold ${f + 1}/${folds}`);
  });
  const inStack = train.flatMap((e, i) => (stacked(e) ? [i] : []));
  const finalTfidf = fitTfidfPairLR(
    inStack.map((i) => tfX[i]),
    inStack.map((i) => pairY[i]),
    pairTfidfDim(tfidf),
  );
  // Pairs outside the stack get the final model's probabilities: it never saw them.
  train.forEach((e, i) => {
    if (!stacked(e)) oofTfidf[i] = finalTfidf.predictProba(tfX[i]);
  });

  // 4. Pair models on the out-of-fold inputs, one per kind: standardiser, out-of-fold logits, temperature, fit.
  const kindIdx = new Map(
    KINDS.map((k) => [k, train.flatMap((e, i) => (kindOf(e.sentences.length) === k ? [i] : []))]),
  );
  type PairStage = ReturnType<typeof fitPairPart>;
  const fitPairPart = (groups: readonly PairGroup[], idx: readonly number[], sampleW: readonly number[]) => {
    const raw = idx.map((i) =>
      pairFeatures(families, groups, {
        candidates: oofCandidates[i],
        lexical: lexical[i],
        tfidf: oofTfidf[i],
        idf: cues[i].idf,
        narrative: options.claimNarrative?.[i],
      }),
    );
    // Scaled on the pairs the fit weighs, so a source weighted 0 changes nothing.
    const standardiser = fitStandardiser(raw.filter((_, r) => sampleW[idx[r]] > 0));
    const X = raw.map((x) => standardise(x, standardiser));
    const fit = (rows: number[]) =>
      trainLogistic(
        rows.map((r) => X[r]),
        rows.map((r) => pairY[idx[r]]),
        pairDim(families, groups),
        // No class weights: the tuned decision weights trade the classes off for weighted F1 instead.
        {
          kind: "multinomial",
          classes: 3,
          l2: pairL2,
          maxIter: 300,
          sampleWeights: rows.map((r) => sampleW[idx[r]]),
        },
      );
    const oofLogits = new Map<number, Float32Array>();
    for (const split of claimFolds(
      idx.map((i) => foldGroup[i]),
      folds,
    )) {
      const m = fit(split.fit);
      for (const r of split.held) oofLogits.set(idx[r], m.decision(X[r]));
    }
    const weighted = idx.filter((i) => sampleW[i] > 0);
    const temperature = fitTemperature(
      weighted.map((i) => oofLogits.get(i) as Float32Array),
      weighted.map((i) => pairY[i]),
    );
    return {
      standardiser,
      oofLogits,
      temperature,
      model: fit(idx.map((_, r) => r)),
    };
  };

  const refit = (
    groups: readonly PairGroup[],
    o: RefitOptions = {},
  ): { model: VerificationModelJson; calibration: CalibrationReport } => {
    if (groups.includes("stance") && !stance) throw new Error("refit: train with `stance: true` first");
    if (
      groups.some((g) => g.startsWith("narrative")) &&
      (options.claimNarrative?.length !== train.length || !options.narrativeGate)
    )
      throw new Error(
        "refit: the narrative group needs options.claimNarrative (every example) and narrativeGate",
      );
    const penalty = o.neiSupportsPenalty ?? options.neiSupportsPenalty ?? 2;
    const sourceWeights = o.sourceWeights ?? options.sourceWeights ?? SOURCE_WEIGHTS;
    const sampleW = train.map((e) => sourceWeights[e.source] ?? 1);
    const refutesBonus = o.refutesBonus ?? options.refutesBonus ?? 0.25;
    // A kind with too few pairs (or a label missing) shares a model fitted on all pairs.
    const tooFew = (idx: readonly number[]) =>
      idx.length < MIN_KIND_PAIRS || new Set(idx.map((i) => pairY[i])).size < LABELS.length;
    const needShared = o.sharedKinds || KINDS.some((k) => tooFew(kindIdx.get(k) ?? []));
    const shared = needShared
      ? fitPairPart(
          groups,
          train.map((_, i) => i),
          sampleW,
        )
      : undefined;
    const parts = {} as Record<Kind, PairPartJson>;
    const oofF1 = {} as Record<Kind, number>;
    const before: { p: number[]; y: number }[] = [];
    const oofLabels: Label[] = new Array(train.length);
    const scaled: { p: number[]; y: number }[] = [];
    const after: { p: number[]; y: number }[] = [];
    for (const kind of KINDS) {
      const own = kindIdx.get(kind) ?? [];
      const part = !o.sharedKinds && !tooFew(own) ? fitPairPart(groups, own, sampleW) : (shared as PairStage);
      // Decisions and calibration are tuned on the kind's own pairs, or on all when it has too few, of the sources
      // the stack learns from: our pairs outnumber SciFact's in the kind and would move its decision.
      const idx = (tooFew(own) ? train.map((_, i) => i) : own).filter((i) => stacked(train[i]));
      const calibrated = idx.map((i) =>
        softmaxWithTemperature(part.oofLogits.get(i) as Float32Array, part.temperature),
      );
      idx.forEach((i, j) => {
        before.push({ p: softmaxWithTemperature(part.oofLogits.get(i) as Float32Array, 1), y: pairY[i] });
        scaled.push({ p: calibrated[j], y: pairY[i] });
      });
      const gold = idx.map((i) => train[i].label);
      const weights: [number, number, number] =
        o.tuneWeights === false
          ? [1, 1, 1]
          : tuneDecision(
              calibrated,
              gold,
              idx.map((i) => oofTfidf[i]),
              { penalty, refutesBonus },
            );
      // The weights are folded into the probabilities shown (ln w on the scaled logits), then re-calibrated:
      // a temperature does not move the argmax, so the label stays the weighted decision and is the top class.
      const folded = idx.map((i) =>
        foldedLogits(part.oofLogits.get(i) as Float32Array, part.temperature, weights),
      );
      const foldedTemperature = fitTemperature(
        folded,
        idx.map((i) => pairY[i]),
      );
      const shown = folded.map((z) => softmaxWithTemperature(z, foldedTemperature));
      idx.forEach((i, j) => {
        after.push({ p: shown[j], y: pairY[i] });
      });
      // Every pair of the kind gets its out-of-fold label, weighted 0 or not (the temperature keeps the argmax).
      for (const i of own)
        oofLabels[i] =
          LABELS[argmax(foldedLogits(part.oofLogits.get(i) as Float32Array, part.temperature, weights))];
      oofF1[kind] = weightedF1(
        shown.map((p) => LABELS[argmax(p)]),
        gold,
      );
      parts[kind] = {
        standardiser: part.standardiser,
        model: part.model.toJSON(),
        temperature: part.temperature,
        classWeights: weights,
        foldedTemperature,
      };
    }
    let builtin: PairPartJson | undefined;
    if (o.builtinKind) {
      const others = o.builtinKind.others;
      const ownIdx = train.flatMap((e, i) => (e.source === "own" || others > 0 ? [i] : []));
      const w = train.map((e) => (e.source === "own" ? 1 : others));
      const part = fitPairPart(groups, ownIdx, w);
      // Temperature and decision on the judged pairs: the written claims' balanced labels are not what users send.
      const judged = train.flatMap((e, i) => (e.source === "own" && e.judged ? [i] : []));
      const tuneOn = judged.length > 0 ? judged : ownIdx.filter((i) => train[i].source === "own");
      const temperature = fitTemperature(
        tuneOn.map((i) => part.oofLogits.get(i) as Float32Array),
        tuneOn.map((i) => pairY[i]),
      );
      const calibrated = tuneOn.map((i) =>
        softmaxWithTemperature(part.oofLogits.get(i) as Float32Array, temperature),
      );
      const weights: [number, number, number] =
        o.tuneWeights === false
          ? [1, 1, 1]
          : tuneDecision(
              calibrated,
              tuneOn.map((i) => train[i].label),
              tuneOn.map((i) => oofTfidf[i]),
              { penalty, refutesBonus },
            );
      const folded = tuneOn.map((i) =>
        foldedLogits(part.oofLogits.get(i) as Float32Array, temperature, weights),
      );
      const foldedTemperature = fitTemperature(
        folded,
        tuneOn.map((i) => pairY[i]),
      );
      for (const i of ownIdx)
        if (train[i].source === "own")
          oofLabels[i] =
            LABELS[argmax(foldedLogits(part.oofLogits.get(i) as Float32Array, temperature, weights))];
      builtin = {
        standardiser: part.standardiser,
        model: part.model.toJSON(),
        temperature,
        classWeights: weights,
        foldedTemperature,
      };
      log(
        `builtin kind (others ${others}): T ${temperature.toFixed(3)}, weights ${weights.join("/")}, folded T ${foldedTemperature.toFixed(3)}`,
      );
    }
    const ece = (rows: { p: number[]; y: number }[]) =>
      expectedCalibrationError(
        rows.map((r) => r.p),
        rows.map((r) => r.y),
      );
    const calibration: CalibrationReport = {
      temperature: { single: parts.single.temperature, multi: parts.multi.temperature },
      classWeights: { single: parts.single.classWeights, multi: parts.multi.classWeights },
      foldedTemperature: { single: parts.single.foldedTemperature, multi: parts.multi.foldedTemperature },
      eceBefore: ece(before),
      eceScaled: ece(scaled),
      eceAfter: ece(after),
      oofF1,
      selectorRecall,
      oofLabels,
    };
    log(
      `pair [${groups.join(", ")}]${o.sharedKinds ? " (shared kinds)" : ""}: ${KINDS.map((k) => `${k}: T ${parts[k].temperature.toFixed(3)}, weights ${parts[k].classWeights.join("/")}, folded T ${parts[k].foldedTemperature.toFixed(3)}, out-of-fold weighted F1 ${oofF1[k].toFixed(3)}`).join("; ")}; ECE ${calibration.eceBefore.toFixed(3)} -> ${calibration.eceAfter.toFixed(3)}`,
    );
    const model: VerificationModelJson = {
      format: MODEL_FORMAT,
      ...(groups.includes("stance") ? { encoder: options.encoderName } : {}),
      families,
      candidates: K,
      selector: selector.toJSON(),
      ...(groups.includes("stance") && stance ? { stance: stance.json } : {}),
      ...(groups.includes("tfidf")
        ? { tfidf: { vectorizer: tfidf.toJSON(), model: finalTfidf.toJSON() } }
        : {}),
      ...(groups.includes("idf") ? { idf: idf.json } : {}),
      pairGroups: [...groups],
      ...(groups.some((g) => g.startsWith("narrative")) ? { narrative: options.narrativeGate } : {}),
      pairs: parts,
      ...(builtin ? { builtinPair: builtin } : {}),
      ...(o.contrastGuard === false ? {} : { contrastGuard: true }),
    };
    return { model, calibration };
  };
  return { ...refit(defaultGroups), refit };
}

export interface EvaluationResult {
  scores: VerificationScores;
  /** Share of gold NEI pairs predicted Supports. */
  neiAsSupports: number;
  ece: number;
  eceUncalibrated: number;
  verdicts: Verdict[];
}

/** Scores a model on examples (the full inference path, as the verifier runs it). */
export async function evaluateModel(
  model: VerificationModel,
  examples: readonly SourcedExample[],
  embed: Embed,
): Promise<EvaluationResult> {
  // Our own pairs are abstracts of the built-in corpus, scored as the pipeline scores them on its index.
  const prepared = examples.map((e) => model.prepare(e.claim, e.sentences, e.title, e.source === "own"));
  const { outputs, verdicts } = await model.verdicts(prepared, embed);
  return {
    ...summarise(examples, verdicts),
    eceUncalibrated: expectedCalibrationError(
      outputs.map((o) => softmaxWithTemperature(o.logits, 1)),
      examples.map((e) => labelIndex(e.label)),
    ),
  };
}

/** Official scores, NEI-as-Supports share and ECE of verdicts against the examples' gold labels. */
export function summarise(
  examples: readonly Pick<SourcedExample, "claimId" | "abstractId" | "label">[],
  verdicts: readonly Verdict[],
): Omit<EvaluationResult, "eceUncalibrated"> {
  const preds = verdicts.map((v, i) => ({
    claimId: examples[i].claimId,
    abstractId: examples[i].abstractId,
    rank: 1,
    label: v.label,
  }));
  const scores = scoreVerification(preds, examples);
  const neiAsSupports = neiAsSupportsShare(
    examples.map((e) => e.label),
    verdicts.map((v) => v.label),
  );
  const ece = expectedCalibrationError(
    verdicts.map((v) => [v.probs.supports, v.probs.refutes, v.probs.nei]),
    examples.map((e) => labelIndex(e.label)),
  );
  return { scores, neiAsSupports, ece, verdicts: [...verdicts] };
}
