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
import { trainLogistic } from "../learning/logistic.ts";
import { hashUnit } from "../learning/split.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { LABELS, type Label, NEI } from "../types.ts";
import { climateFeverExamples, type SourcedExample, sciFactExamples, splitByClaim } from "./examples.ts";
import { ALL_FAMILIES, type Family, pairDim, pairFeatures, stanceDim, stanceFeatures } from "./features.ts";
import { profile } from "./lexical.ts";
import {
  type Embed,
  lexicalMatrix,
  MODEL_FORMAT,
  selectCandidates,
  type VerificationModel,
  type VerificationModelJson,
} from "./model.ts";
import { decide, probsFromArray, type Verdict } from "./verifier.ts";

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
  return splitByClaim(all);
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
  log?: (message: string) => void;
}

export interface CalibrationReport {
  temperature: number;
  minConfidence: number;
  /** Out-of-fold (train) expected calibration error, before and after temperature scaling. */
  eceBefore: number;
  eceAfter: number;
  /** Selector: share of gold rationale sentences among the candidates (SciFact train evidence pairs). */
  selectorRecall: number;
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

export async function trainVerificationModel(
  train: readonly SourcedExample[],
  options: TrainOptions,
): Promise<{ model: VerificationModelJson; calibration: CalibrationReport }> {
  const log = options.log ?? (() => {});
  const families = options.families ?? [...ALL_FAMILIES];
  const K = options.candidates ?? 2;
  const folds = options.folds ?? 3;
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
  const standardiser = fitStandardiser(rawX);
  const X = rawX.map((x) => standardise(x, standardiser));
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
  const pairX = train.map((e, i) =>
    pairFeatures(
      families,
      candidates[i].map((c) => ({ ...c, stance: bySentence.get(`${i}:${c.index}`) as Float32Array })),
      e.sentences.length,
      (j) => lexical[i][j],
    ),
  );
  const pairY = train.map((e) => labelIndex(e.label));
  const fitPair = (idx: number[]) =>
    trainLogistic(
      idx.map((i) => pairX[i]),
      idx.map((i) => pairY[i]),
      pairDim(families),
      // Balanced: Refutes is rare and the costliest miss; the NEI threshold can take precision back.
      { kind: "multinomial", classes: 3, l2: pairL2, classWeight: "balanced", maxIter: 300 },
    );

  // 4. Out-of-fold pair logits -> temperature and NEI confidence threshold.
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
  const eceBefore = expectedCalibrationError(
    oofLogits.map((z) => softmaxWithTemperature(z, 1)),
    pairY,
  );
  const calibrated = oofLogits.map((z) => probsFromArray(softmaxWithTemperature(z, temperature)));
  const eceAfter = expectedCalibrationError(
    calibrated.map((p) => [p.supports, p.refutes, p.nei]),
    pairY,
  );
  const gold = train.map((e) => e.label);
  let minConfidence = 0;
  let bestF1 = -1;
  for (let t = 0; t <= 0.8 + 1e-9; t += 0.02) {
    const f1 = weightedF1(
      calibrated.map((p) => decide(p, t).label),
      gold,
    );
    if (f1 > bestF1 + 1e-9) {
      bestF1 = f1;
      minConfidence = Number(t.toFixed(2));
    }
  }
  log(
    `temperature ${temperature.toFixed(3)}, ECE ${eceBefore.toFixed(3)} -> ${eceAfter.toFixed(3)}, min confidence ${minConfidence}`,
  );

  // 5. Final models on all training data.
  const finalStance = fitStance(stance.map((_, i) => i));
  const finalPair = fitPair(train.map((_, i) => i));
  const model: VerificationModelJson = {
    format: MODEL_FORMAT,
    encoder: options.encoderName,
    families,
    candidates: K,
    selector: selector.toJSON(),
    stance: { standardiser, model: finalStance.toJSON() },
    pair: finalPair.toJSON(),
    temperature,
    minConfidence,
  };
  return { model, calibration: { temperature, minConfidence, eceBefore, eceAfter, selectorRecall } };
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
  const prepared = examples.map((e) => model.prepare(e.claim, e.sentences));
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
