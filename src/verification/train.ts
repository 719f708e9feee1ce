/**
 * Training of the built-in verifier from SciFact and Climate-FEVER train splits (by claim id). Out-of-fold
 * predictions keep every later stage honest: the pair model learns from stance probabilities of models that did
 * not see the pair, and the temperature and the NEI confidence threshold are fitted on out-of-fold pair logits.
 * The dev split is never seen in training; it is only scored.
 */

import { trainingFiles } from "../data/paths.ts";
import { readClimateFever, readSciFactClaims, readSciFactCorpus } from "../data/training-sets.ts";
import { scoreVerification, type VerificationScores } from "../evaluation/metrics.ts";
import { expectedCalibrationError, fitTemperature, softmaxWithTemperature } from "../learning/calibration.ts";
import { tuneDecisionWeights, weightedArgmax } from "../learning/decision-weights.ts";
import { trainLogistic } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { hashUnit } from "../learning/split.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { LABELS, type Label, NEI } from "../types.ts";
import { climateFeverExamples, type SourcedExample, sciFactExamples, splitByClaim } from "./examples.ts";
import {
  ALL_FAMILIES,
  ALL_PAIR_GROUPS,
  type CandidateScore,
  type Family,
  type PairGroup,
  pairDim,
  pairFeatures,
  stanceDim,
  stanceFeatures,
} from "./features.ts";
import { profile } from "./lexical.ts";
import {
  type Embed,
  lexicalMatrix,
  MODEL_FORMAT,
  selectCandidates,
  type VerificationModel,
  type VerificationModelJson,
} from "./model.ts";
import { fitPairVectorizer, fitTfidfPairLR, pairTfidfDim, pairTfidfFeatures } from "./tfidf-pair.ts";
import type { Verdict } from "./verifier.ts";

export interface VerificationData {
  train: SourcedExample[];
  dev: SourcedExample[];
}

/** SciFact (1 similar non-evidence abstract per claim as extra NEI) and Climate-FEVER, split by claim id. */
export async function loadVerificationData(dir?: string): Promise<VerificationData> {
  const f = trainingFiles(dir);
  const [corpus, claims, fever] = await Promise.all([
    readSciFactCorpus(f.scifactCorpus),
    readSciFactClaims(f.scifactClaims),
    readClimateFever(f.climateFever),
  ]);
  const all = [...sciFactExamples(claims, corpus, { similarNei: 1 }), ...climateFeverExamples(fever)];
  return dropLeaks(splitByClaim(all));
}

const claimKey = (claim: string) => claim.toLowerCase().replace(/\W+/g, " ").trim();

/**
 * Some claims come twice under different ids (38 train pairs repeat a dev claim's text); those train pairs are
 * dropped so no dev claim is seen in training. The dev side stays as split, so dev figures stay comparable.
 */
export function dropLeaks<T extends { claim: string }>(split: {
  train: T[];
  dev: T[];
}): { train: T[]; dev: T[] } {
  const devClaims = new Set(split.dev.map((e) => claimKey(e.claim)));
  return { train: split.train.filter((e) => !devClaims.has(claimKey(e.claim))), dev: split.dev };
}

export interface TrainOptions {
  embed: Embed;
  encoderName: string;
  families?: Family[];
  /** Sentences per abstract that go through the encoder. */
  candidates?: number;
  /** Folds of the out-of-fold predictions. */
  folds?: number;
  stanceL2?: number;
  /** L-BFGS iterations of the stance model (the costly fit; fewer for quick ablations). */
  stanceMaxIter?: number;
  pairL2?: number;
  /** Pair feature groups (ablations switch groups off). */
  pairGroups?: PairGroup[];
  /** Cheap first pass that lets clear NEI pairs skip the encoder (default on). */
  cascade?: boolean;
  /** Weight of the NEI -> Supports share subtracted from weighted F1 when the decision weights are tuned. */
  neiSupportsPenalty?: number;
  log?: (message: string) => void;
}

export interface CalibrationReport {
  temperature: number;
  classWeights: [number, number, number];
  classWeightsSingle: [number, number, number];
  /** Out-of-fold (train) expected calibration error, before and after temperature scaling. */
  eceBefore: number;
  eceAfter: number;
  /** Selector: share of gold rationale sentences among the candidates (SciFact train evidence pairs). */
  selectorRecall: number;
  /** Share of train pairs (out of fold) the cascade settles without the encoder; 0 without a cascade. */
  cascadeSkipped: number;
}

const labelIndex = (l: Label) => LABELS.indexOf(l);

function foldOf(claimId: string, folds: number): number {
  return Math.min(folds - 1, Math.floor(hashUnit(claimId, "verification-fold") * folds));
}

/** Weighted F1 (official definition) of label decisions against gold labels. */
function weightedF1(pred: readonly Label[], gold: readonly Label[]): number {
  const preds = pred.map((label, i) => ({ claimId: String(i), abstractId: "a", rank: 1, label }));
  const golds = gold.map((label, i) => ({ claimId: String(i), abstractId: "a", label }));
  return scoreVerification(preds, golds).f1_weighted;
}

export interface TrainedVerification {
  model: VerificationModelJson;
  calibration: CalibrationReport;
  /** The pair stage again with other groups or decision options, on the same out-of-fold inputs (ablations). */
  refit(
    groups: readonly PairGroup[],
    options?: { neiSupportsPenalty?: number; tuneWeights?: boolean; cascade?: boolean },
  ): { model: VerificationModelJson; calibration: CalibrationReport };
}

export async function trainVerificationModel(
  train: readonly SourcedExample[],
  options: TrainOptions,
): Promise<TrainedVerification> {
  const log = options.log ?? (() => {});
  const families = options.families ?? [...ALL_FAMILIES];
  const K = options.candidates ?? 2;
  const folds = options.folds ?? 5;
  const stanceL2 = options.stanceL2 ?? 1e-3;
  const pairL2 = options.pairL2 ?? 1e-3;

  // 1. Selector: is a sentence a rationale? (SciFact evidence abstracts, the only multi-sentence gold).
  const lexical = train.map((e) => lexicalMatrix(profile(e.claim), e.sentences));
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

  // 2. Stance examples: candidates (NEI unless a rationale) plus the gold rationale sentences.
  const stance: { pair: number; sentence: number; label: number }[] = [];
  train.forEach((e, i) => {
    const rationale = new Set(e.rationale);
    const sentences = new Set([...candidates[i].map((c) => c.index), ...e.rationale]);
    for (const s of sentences)
      stance.push({ pair: i, sentence: s, label: labelIndex(rationale.has(s) ? e.label : NEI) });
  });
  const texts = [
    ...new Set([...train.map((e) => e.claim), ...stance.map((s) => train[s.pair].sentences[s.sentence])]),
  ];
  log(`encoding ${texts.length} texts`);
  const vectors = await options.embed(texts);
  const vec = new Map(texts.map((t, i) => [t, vectors[i]]));
  const rawX = stance.map((s) => {
    const e = train[s.pair];
    return stanceFeatures(
      families,
      vec.get(e.claim) as Float32Array,
      vec.get(e.sentences[s.sentence]) as Float32Array,
      lexical[s.pair][s.sentence],
    );
  });
  const stanceStandardiser = fitStandardiser(rawX);
  const X = rawX.map((x) => standardise(x, stanceStandardiser));
  const Y = stance.map((s) => s.label);
  const dim = stanceDim(families, vectors[0]?.length ?? 0);
  const fitStance = (idx: number[]) =>
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

  // 3. Out-of-fold stance probabilities -> pair features.
  const oofStance: Float32Array[] = new Array(stance.length);
  for (let f = 0; f < folds; f++) {
    const fitIdx: number[] = [];
    const predIdx: number[] = [];
    stance.forEach((s, i) => {
      (foldOf(train[s.pair].claimId, folds) === f ? predIdx : fitIdx).push(i);
    });
    const m = fitStance(fitIdx);
    for (const i of predIdx) oofStance[i] = m.predictProba(X[i]);
    log(`stance fold ${f + 1}/${folds}: ${fitIdx.length} fit, ${predIdx.length} held out`);
  }
  const bySentence = new Map(stance.map((s, i) => [`${s.pair}:${s.sentence}`, oofStance[i]]));
  const oofCandidates: CandidateScore[][] = train.map((_, i) =>
    candidates[i].map((c) => ({ ...c, stance: bySentence.get(`${i}:${c.index}`) as Float32Array })),
  );

  // 4. Pair-level TF-IDF model: out-of-fold probabilities for the pair model, final fit for inference.
  const tfidf = fitPairVectorizer(train);
  const tfX: SparseVector[] = train.map((e) => pairTfidfFeatures(tfidf, e));
  const pairY = train.map((e) => labelIndex(e.label));
  const oofTfidf: Float32Array[] = new Array(train.length);
  for (let f = 0; f < folds; f++) {
    const fitIdx: number[] = [];
    const predIdx: number[] = [];
    train.forEach((e, i) => {
      (foldOf(e.claimId, folds) === f ? predIdx : fitIdx).push(i);
    });
    const m = fitTfidfPairLR(
      fitIdx.map((i) => tfX[i]),
      fitIdx.map((i) => pairY[i]),
      pairTfidfDim(tfidf),
    );
    for (const i of predIdx) oofTfidf[i] = m.predictProba(tfX[i]);
    log(`tfidf fold ${f + 1}/${folds}`);
  }
  const finalTfidf = fitTfidfPairLR(tfX, pairY, pairTfidfDim(tfidf));
  const finalStance = fitStance(stance.map((_, i) => i));

  // 5. Pair model on the out-of-fold inputs; refit() lets ablations swap the groups without refitting the rest.
  // One pair model on the out-of-fold inputs: standardiser, out-of-fold logits, temperature, final fit.
  const fitPairStage = (groups: readonly PairGroup[]) => {
    const raw = train.map((_, i) =>
      pairFeatures(families, groups, {
        candidates: oofCandidates[i],
        lexical: lexical[i],
        tfidf: oofTfidf[i],
      }),
    );
    const standardiser = fitStandardiser(raw);
    const pairX = raw.map((x) => standardise(x, standardiser));
    const fitPair = (idx: number[]) =>
      trainLogistic(
        idx.map((i) => pairX[i]),
        idx.map((i) => pairY[i]),
        pairDim(families, groups),
        // Unweighted: the tuned decision weights trade the classes off for weighted F1 instead.
        { kind: "multinomial", classes: 3, l2: pairL2, maxIter: 300 },
      );
    const oofLogits: Float32Array[] = new Array(train.length);
    for (let f = 0; f < folds; f++) {
      const fitIdx: number[] = [];
      const predIdx: number[] = [];
      train.forEach((e, i) => {
        (foldOf(e.claimId, folds) === f ? predIdx : fitIdx).push(i);
      });
      const m = fitPair(fitIdx);
      for (const i of predIdx) oofLogits[i] = m.decision(pairX[i]);
    }
    const temperature = fitTemperature(oofLogits, pairY);
    const calibrated = oofLogits.map((z) => softmaxWithTemperature(z, temperature));
    return {
      standardiser,
      oofLogits,
      temperature,
      calibrated,
      final: fitPair(train.map((_, i) => i)),
    };
  };

  const refit = (
    groups: readonly PairGroup[],
    o: { neiSupportsPenalty?: number; tuneWeights?: boolean; cascade?: boolean } = {},
  ): { model: VerificationModelJson; calibration: CalibrationReport } => {
    const stage = fitPairStage(groups);
    const { standardiser, oofLogits, temperature, calibrated } = stage;
    const eceBefore = expectedCalibrationError(
      oofLogits.map((z) => softmaxWithTemperature(z, 1)),
      pairY,
    );
    const eceAfter = expectedCalibrationError(calibrated, pairY);
    // Decision weights, one set for one-sentence abstracts (claim-sentence pairs) and one for longer abstracts
    // (the two behave differently and the sentence count is known at inference): weighted F1 minus `penalty` per
    // point of NEI pairs called Supports beyond the TF-IDF model's own out-of-fold share (never worse there).
    const penalty = o.neiSupportsPenalty ?? options.neiSupportsPenalty ?? 2;
    const kinds = [true, false]
      .map((single) => train.flatMap((_, i) => ((lexical[i].length === 1) === single ? [i] : [])))
      .filter((idx) => idx.length > 0);
    const neiAsSupports = (idx: readonly number[], decide: (i: number) => number) => {
      const nei = idx.filter((i) => train[i].label === NEI);
      return nei.length ? nei.filter((i) => decide(i) === 0).length / nei.length : 0;
    };
    const argmax = (p: ArrayLike<number>) => weightedArgmax(p, [1, 1, 1]);
    const kindObjective = (idx: readonly number[]) => {
      const allowed = neiAsSupports(idx, (i) => argmax(oofTfidf[i]));
      const gold = idx.map((i) => train[i].label);
      return (decide: (i: number) => number) =>
        weightedF1(
          idx.map((i) => LABELS[decide(i)]),
          gold,
        ) -
        penalty * Math.max(0, neiAsSupports(idx, decide) - allowed);
    };
    const objectives = kinds.map(kindObjective);
    const objective = (decisions: number[]) =>
      objectives.reduce((sum, f) => sum + f((i) => decisions[i]), 0) / objectives.length;
    const tuned = kinds.map((idx, k) => {
      if (o.tuneWeights === false) return [1, 1, 1];
      const at = new Map(idx.map((i, j) => [i, j]));
      return tuneDecisionWeights(
        idx.map((i) => calibrated[i]),
        (d) => objectives[k]((i) => d[at.get(i) as number]),
        3,
      ).weights;
    });
    const single = kinds.findIndex((idx) => lexical[idx[0]].length === 1);
    const multi = kinds.findIndex((idx) => lexical[idx[0]].length > 1);
    const classWeights = (tuned[multi] ?? [1, 1, 1]) as [number, number, number];
    const classWeightsSingle = (tuned[single] ?? classWeights) as [number, number, number];
    const weightsOf = (i: number) => (lexical[i].length === 1 ? classWeightsSingle : classWeights);
    log(
      `pair [${groups.join(", ")}]: temperature ${temperature.toFixed(3)}, ECE ${eceBefore.toFixed(3)} -> ${eceAfter.toFixed(3)}, decision weights ${classWeights.join("/")} (one sentence: ${classWeightsSingle.join("/")})`,
    );
    const decisions = calibrated.map((p, i) => weightedArgmax(p, weightsOf(i)));
    const oofObjective = objective(decisions);

    // Cascade: the smallest cheap-model NEI threshold that costs at most 0.005 of the out-of-fold objective.
    let cascade: VerificationModelJson["cascade"];
    let skipped = 0;
    if (groups.includes("stance") && o.cascade !== false && options.cascade !== false) {
      const cheapGroups = groups.filter((g) => g !== "stance");
      const cheap = fitPairStage(cheapGroups);
      for (const t of [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98]) {
        const early = cheap.calibrated.map((p) => p[2] >= t);
        if (objective(decisions.map((d, i) => (early[i] ? 2 : d))) < oofObjective - 0.005) continue;
        skipped = early.filter(Boolean).length / early.length;
        cascade = {
          pairGroups: cheapGroups,
          pair: { standardiser: cheap.standardiser, model: cheap.final.toJSON() },
          temperature: cheap.temperature,
          neiThreshold: t,
        };
        break;
      }
      log(
        cascade
          ? `cascade: cheap NEI >= ${cascade.neiThreshold} skips the encoder for ${(100 * skipped).toFixed(1)} % of train pairs (out of fold)`
          : "cascade: no threshold within 0.005 of the objective; off",
      );
    }
    const model: VerificationModelJson = {
      format: MODEL_FORMAT,
      encoder: options.encoderName,
      families,
      candidates: K,
      selector: selector.toJSON(),
      stance: { standardiser: stanceStandardiser, model: finalStance.toJSON() },
      ...(groups.includes("tfidf")
        ? { tfidf: { vectorizer: tfidf.toJSON(), model: finalTfidf.toJSON() } }
        : {}),
      pairGroups: [...groups],
      pair: { standardiser, model: stage.final.toJSON() },
      temperature,
      classWeights,
      classWeightsSingle,
      ...(cascade ? { cascade } : {}),
    };
    return {
      model,
      calibration: {
        temperature,
        classWeights,
        classWeightsSingle,
        eceBefore,
        eceAfter,
        selectorRecall,
        cascadeSkipped: skipped,
      },
    };
  };
  return { ...refit(options.pairGroups ?? [...ALL_PAIR_GROUPS]), refit };
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
  const prepared = examples.map((e) => model.prepare(e.claim, e.sentences, e.title));
  const outputs = await model.score(prepared, embed);
  const verdicts = outputs.map((o) => model.verdict(o));
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
  const nei = examples.map((e, i) => ({ e, v: verdicts[i] })).filter(({ e }) => e.label === NEI);
  const neiAsSupports = nei.length ? nei.filter(({ v }) => v.label === "Supports").length / nei.length : 0;
  const ece = expectedCalibrationError(
    verdicts.map((v) => [v.probs.supports, v.probs.refutes, v.probs.nei]),
    examples.map((e) => labelIndex(e.label)),
  );
  return { scores, neiAsSupports, ece, verdicts: [...verdicts] };
}
