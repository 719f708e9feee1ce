/**
 * Trains the narratives model: a stance gate (binary: does the text carry any narrative?) on contrarian and
 * mainstream text, Platt-calibrated on out-of-fold logits; then, for texts that carry one, a softmax over the groups
 * and one softmax over the sub-codes of each group. All are L-BFGS logistic regressions on the chosen feature
 * families. Thresholds (per group, per code) are tuned on out-of-fold scores of the training set, so the dev split
 * stays untouched for reporting. Deterministic.
 */

import { flaggedShareByGroup, meanF1OverPresent } from "../evaluation/metrics.ts";
import { type Features, type LogisticModel, trainLogistic } from "../learning/logistic.ts";
import { Mlp } from "../learning/mlp.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { hashUnit } from "../learning/split.ts";
import { fitStandardiser } from "../learning/standardise.ts";
import { tuneThreshold } from "../learning/thresholds.ts";
import { type Group, groupOf, NARRATIVES, NO_NARRATIVE, subCodes } from "../taxonomy/cards.ts";
import type { NarrativeExample } from "../types.ts";
import { countBySource, type StanceExample, splitKey } from "./data.ts";
import {
  type ClassifyCodes,
  decide,
  type Fallback,
  NARRATIVE_GROUPS,
  NARRATIVE_THRESHOLD,
  type NarrativeScores,
  type Thresholds,
} from "./decide.ts";
import { DESCRIBED_CODES, type FeatureFamily, NarrativeFeatures, prototypeTexts } from "./features.ts";
import {
  combinedGateScore,
  type GateMlp,
  NARRATIVES_FORMAT,
  type NarrativeModelJson,
  type Platt,
  plattProbability,
  type Scale,
  scoreVector,
  type TextEmbedder,
} from "./model.ts";

export interface GateOptions {
  l2: number;
  /** Total weight of the texts without a narrative over that of the texts with one (a prior against false alarms). */
  noneWeight: number;
  /**
   * Weight of the written contrast texts in the gate over what gateWeights gives them (absent: 1): the only texts
   * whose topic-matched pairs differ in stance alone.
   */
  contrastWeight?: number;
  /**
   * Paired training (absent: 0): each written subject's contrarian-minus-mainstream feature differences as extra
   * rows, (d, narrative) and (-d, none), of total weight this times that of the written texts. On a difference
   * the subject's shared topic cancels, so these rows teach the gate only what separates stance.
   */
  pairWeight?: number;
}

export interface TrainOptions {
  families: FeatureFamily[];
  /** Needed when families include "use". */
  encoder?: TextEmbedder;
  fallback: Fallback;
  l2: number;
  /** Weight of each taxonomy description used as a training example (with the "desc" family). */
  descWeight: number;
  /** Folds for the out-of-fold calibration and threshold tuning. */
  folds: number;
  wordMaxFeatures: number;
  charMaxFeatures: number;
  gate: GateOptions;
  /** GWSD rows in the gate: "cv" (where cross-validation says they pay), true (always) or false (never). */
  gwsd: "cv" | boolean;
  log?: (msg: string) => void;
}

export const DEFAULT_TRAIN_OPTIONS: TrainOptions = {
  families: ["word", "char", "desc", "cues", "use"],
  fallback: "group-code",
  l2: 1e-4,
  descWeight: 2,
  folds: 4,
  wordMaxFeatures: 6000,
  charMaxFeatures: 10000,
  // Issue 23, chosen out of fold on train (bench narratives-gate-cv): written texts x4 and paired rows x1, with the
  // markers family (build.ts VARIANTS), lowered the fast gate's worst ratio from 3.147 to 2.588.
  gate: { l2: 1e-4, noneWeight: 1, contrastWeight: 4, pairWeight: 1 },
  gwsd: "cv",
};

/** One training row of a logistic regression: a feature vector, a class, a weight and a fold. */
export interface Row {
  x: SparseVector;
  y: number;
  w: number;
  fold: number;
}

/** Square-root balanced class weights: rare classes count more, but a class of one example does not dominate. */
function sqrtBalanced(y: readonly number[], classes: number): number[] {
  const counts = new Array(classes).fill(0);
  for (const c of y) counts[c]++;
  return counts.map((c) => (c > 0 ? Math.sqrt(y.length / (classes * c)) : 0));
}

function fit(rows: readonly Row[], classes: number, dim: number, l2: number): LogisticModel {
  const y = rows.map((r) => r.y);
  const cw = sqrtBalanced(y, classes);
  return trainLogistic(
    rows.map((r) => r.x as Features),
    y,
    dim,
    { kind: "multinomial", classes, l2, sampleWeights: rows.map((r) => r.w * cw[r.y]), maxIter: 150 },
  );
}

/** The fold of a text: by hash of its normalised form, so a repeated text never sits on both sides. */
export const foldOf = (text: string, folds: number): number =>
  Math.min(folds - 1, Math.floor(hashUnit(splitKey(text), "narratives-folds") * folds));

/**
 * Gate weights: within each class every source's total weight grows with the square root of its size (no source
 * drowns the others), the classes sum to 1 (narrative) and `noneWeight` (none), and the mean weight is 1.
 */
export function gateWeights(rows: readonly StanceExample[], noneWeight: number): number[] {
  const size = new Map<string, number>();
  const key = (e: StanceExample) => `${e.narrative}:${e.source}`;
  for (const e of rows) size.set(key(e), (size.get(key(e)) ?? 0) + 1);
  const classTotal = (narrative: boolean) =>
    [...size].filter(([k]) => k.startsWith(`${narrative}:`)).reduce((s, [, n]) => s + Math.sqrt(n), 0);
  const totals = { true: classTotal(true), false: classTotal(false) };
  const raw = rows.map((e) => {
    const n = size.get(key(e)) ?? 1;
    const share = Math.sqrt(n) / (totals[String(e.narrative) as "true" | "false"] || 1);
    return (share / n) * (e.narrative ? 1 : noneWeight);
  });
  const mean = raw.reduce((s, w) => s + w, 0) / Math.max(1, raw.length);
  return raw.map((w) => w / mean);
}

/** Gate weights with the written contrast texts weighing `contrastWeight` times more, renormalised to mean 1. */
export function stanceWeights(rows: readonly StanceExample[], gate: GateOptions): number[] {
  const base = gateWeights(rows, gate.noneWeight);
  const k = gate.contrastWeight ?? 1;
  if (k === 1) return base;
  const raw = base.map((w, i) => (rows[i].source === "contrast" ? w * k : w));
  const mean = raw.reduce((s, w) => s + w, 0) / Math.max(1, raw.length);
  return raw.map((w) => w / mean);
}

/** a - b, sparse (both sorted by index). */
export function sparseDifference(a: SparseVector, b: SparseVector): SparseVector {
  const indices: number[] = [];
  const values: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.indices.length || j < b.indices.length) {
    const ai = i < a.indices.length ? a.indices[i] : Number.POSITIVE_INFINITY;
    const bj = j < b.indices.length ? b.indices[j] : Number.POSITIVE_INFINITY;
    let v: number;
    let k: number;
    if (ai === bj) {
      k = ai;
      v = a.values[i++] - b.values[j++];
    } else if (ai < bj) {
      k = ai;
      v = a.values[i++];
    } else {
      k = bj;
      v = -b.values[j++];
    }
    if (v !== 0) {
      indices.push(k);
      values.push(v);
    }
  }
  return { indices: Int32Array.from(indices), values: Float32Array.from(values) };
}

/** Pairs taken per written subject at most (evenly spaced over its contrarian x mainstream pairs). */
const PAIRS_PER_SUBJECT = 40;

/**
 * The paired rows of the written texts (GateOptions.pairWeight): per subject (foldKey), differences of a contrarian
 * text's vector and a non-contrarian one's, both signs, in the subject's fold. Every subject's pairs weigh the same.
 */
export function pairRows(
  stance: readonly StanceExample[],
  vectors: readonly SparseVector[],
  weights: readonly number[],
  options: Pick<TrainOptions, "folds" | "gate">,
): Row[] {
  const pairWeight = options.gate.pairWeight ?? 0;
  if (pairWeight <= 0) return [];
  const subjects = new Map<string, { c: number[]; m: number[] }>();
  let writtenTotal = 0;
  stance.forEach((e, i) => {
    if (e.source !== "contrast" || !e.foldKey) return;
    writtenTotal += weights[i];
    const s = subjects.get(e.foldKey) ?? { c: [], m: [] };
    (e.narrative ? s.c : s.m).push(i);
    subjects.set(e.foldKey, s);
  });
  const usable = [...subjects].filter(([, s]) => s.c.length > 0 && s.m.length > 0);
  const perSubject = (pairWeight * writtenTotal) / Math.max(1, usable.length);
  const rows: Row[] = [];
  for (const [key, s] of usable) {
    const all = s.c.flatMap((c) => s.m.map((m) => [c, m] as const));
    const step = Math.max(1, all.length / PAIRS_PER_SUBJECT);
    const picked: (readonly [number, number])[] = [];
    for (let k = 0; Math.floor(k) < all.length && picked.length < PAIRS_PER_SUBJECT; k += step)
      picked.push(all[Math.floor(k)]);
    const w = perSubject / (2 * picked.length);
    const fold = foldOf(key, options.folds);
    for (const [c, m] of picked) {
      const d = sparseDifference(vectors[c], vectors[m]);
      rows.push({ x: d, y: 1, w, fold });
      rows.push({ x: { indices: d.indices, values: d.values.map((v) => -v) }, y: 0, w, fold });
    }
  }
  return rows;
}

/** The gate's logistic regression (exported for the verifier's out-of-fold P(narrative), verification/claim-narrative.ts). */
export function fitGate(rows: readonly Row[], dim: number, l2: number): LogisticModel {
  return trainLogistic(
    rows.map((r) => r.x as Features),
    rows.map((r) => r.y),
    dim,
    { kind: "binary", classes: 2, l2, sampleWeights: rows.map((r) => r.w), maxIter: 200 },
  );
}

/** Platt scaling: a one-feature logistic regression of the label on the out-of-fold logit, same weights. */
export function fitPlatt(
  logits: readonly number[],
  labels: readonly number[],
  weights: readonly number[],
): Platt {
  const m = trainLogistic(
    logits.map((z) => Float32Array.of(z)),
    labels,
    1,
    { kind: "binary", classes: 2, l2: 0, sampleWeights: weights, maxIter: 100 },
  );
  return { a: m.weights[0], b: m.bias[0] };
}

interface Fitted {
  group: LogisticModel;
  codes: Map<number, { codes: string[]; model: LogisticModel }>;
}

function fitCodes(
  groupRows: Row[],
  codeRows: Map<number, Row[]>,
  dim: number,
  l2: number,
  skipFold: number,
): Fitted {
  const keep = (r: Row) => r.fold !== skipFold;
  const group = fit(groupRows.filter(keep), NARRATIVE_GROUPS.length, dim, l2);
  const codes = new Map<number, { codes: string[]; model: LogisticModel }>();
  for (const g of NARRATIVE_GROUPS) {
    const subs = subCodes(g);
    codes.set(g, { codes: subs, model: fit((codeRows.get(g) ?? []).filter(keep), subs.length, dim, l2) });
  }
  return { group, codes };
}

/** Embeds texts when the model needs it (the memo embedder makes repeats free). */
async function embedAll(
  texts: string[],
  options: TrainOptions,
): Promise<Map<string, Float32Array> | undefined> {
  if (!options.families.includes("use") || !options.encoder) return undefined;
  const distinctTexts = [...new Set(texts)];
  const vectors = await options.encoder.embed(distinctTexts);
  return new Map(distinctTexts.map((t, i) => [t, vectors[i]]));
}

/** A gate's calibration: Platt on out-of-fold scores, the chosen threshold folded in, and what it gives out of fold. */
interface GateCalibration {
  platt: Platt;
  /** The out-of-fold threshold chosen on P(narrative) at even odds, folded into `platt` (chooseGateThreshold). */
  threshold: number;
  /** Calibrated out-of-fold P(narrative) per stance row, the threshold folded in. */
  oof: number[];
  /** gateWorstRatio of `oof` at NARRATIVE_THRESHOLD. */
  worst: number;
}

function calibrateGate(
  scores: readonly number[],
  labels: readonly number[],
  weights: readonly number[],
  cells: readonly string[],
): GateCalibration {
  const calibrated = fitPlatt(scores, labels, weights);
  const threshold = chooseGateThreshold(
    cells,
    scores.map((z) => plattProbability(z, calibrated)),
  );
  // Bayes' rule for a prior that makes a narrative threshold/(1 - threshold) times less likely: the shown
  // probability is still calibrated (under that prior), and 0.5 on it is the chosen threshold.
  const platt = { a: calibrated.a, b: calibrated.b - Math.log(threshold / (1 - threshold)) };
  const oof = scores.map((z) => plattProbability(z, platt));
  return { platt, threshold, oof, worst: gateWorstRatio(cells, oof, NARRATIVE_THRESHOLD) };
}

/** Out-of-fold gate logits of the stance rows, and the gate fitted on all of them. */
export interface GateFit extends GateCalibration {
  model: LogisticModel;
  /** Present when the MLP was tried and paid out of fold (mlpPays). */
  mlp?: GateMlp;
  /** When the MLP was tried: the linear gate alone, calibrated the same way, and whether the MLP shipped. */
  linear?: GateCalibration;
  mlpShipped?: boolean;
}

/** Seed of fold f's gate MLP (f = folds: the final one). */
const GATE_MLP_SEED = 7;

export const scaleOf = (z: readonly number[]): Scale => {
  const s = fitStandardiser(z.map((v) => [v]));
  return { mean: s.mean[0], sd: s.std[0] };
};

/** Prototype texts as gate rows: in every fold's training, never scored out of fold (fold -1). */
export const prototypeRows = (
  prototypes: readonly { x: SparseVector; narrative: boolean; w: number }[],
): Row[] => prototypes.map((p) => ({ x: p.x, y: p.narrative ? 1 : 0, w: p.w, fold: -1 }));

/** Out-of-fold logits of the linear gate: each row scored by the gate fitted on the other folds (and `extra`). */
export function linearGateOof(
  rows: readonly Row[],
  extra: readonly Row[],
  dim: number,
  options: Pick<TrainOptions, "folds" | "gate" | "log">,
): number[] {
  const logits = new Array<number>(rows.length);
  for (let f = 0; f < options.folds; f++) {
    options.log?.(`gate fold ${f + 1}/${options.folds}`);
    // Extra rows of fold -1 (prototypes) train every fold; paired rows carry their subject's fold.
    const m = fitGate(
      [...rows.filter((r) => r.fold !== f), ...extra.filter((r) => r.fold !== f)],
      dim,
      options.gate.l2,
    );
    rows.forEach((r, i) => {
      if (r.fold === f) logits[i] = m.decision(r.x)[0];
    });
  }
  return logits;
}

/** The gate's MLP on the rows' sentence vectors (labels and weights of `rows`) that `keep` selects. */
function trainGateMlp(
  rows: readonly Row[],
  sentences: readonly Float32Array[],
  keep: (i: number) => boolean,
  seed: number,
): Mlp {
  const idx = rows.flatMap((_, i) => (keep(i) ? [i] : []));
  return Mlp.train(
    idx.map((i) => sentences[i]),
    idx.map((i) => rows[i].y),
    { seed, sampleWeights: idx.map((i) => rows[i].w) },
  );
}

/** Out-of-fold logits of the gate's MLP, on the rows' folds (fold f's net seeded GATE_MLP_SEED + f). */
export function mlpGateOof(
  rows: readonly Row[],
  sentences: readonly Float32Array[],
  options: Pick<TrainOptions, "folds" | "log">,
): number[] {
  const logits = new Array<number>(rows.length);
  for (let f = 0; f < options.folds; f++) {
    options.log?.(`gate MLP fold ${f + 1}/${options.folds}`);
    const net = trainGateMlp(rows, sentences, (i) => rows[i].fold !== f, GATE_MLP_SEED + f);
    rows.forEach((r, i) => {
      if (r.fold === f) logits[i] = net.decision(sentences[i]);
    });
  }
  return logits;
}

/**
 * `prototypes` (descriptions with a narrative, rebuttals without) train every fold and are never scored out of
 * fold: they are not data, and they are the only examples of some codes' stance. With `sentences` (each stance
 * row's raw sentence vector) an MLP on them is trained on the same folds, and the gate becomes the sum of the
 * standardised linear and MLP logits when that pays out of fold (mlpPays); else it stays linear.
 */
export function trainGate(
  stance: readonly StanceExample[],
  vectors: readonly SparseVector[],
  dim: number,
  options: Pick<TrainOptions, "folds" | "gate" | "log">,
  prototypes: readonly { x: SparseVector; narrative: boolean; w: number }[] = [],
  sentences?: readonly Float32Array[],
): GateFit {
  const weights = stanceWeights(stance, options.gate);
  const rows: Row[] = stance.map((e, i) => ({
    x: vectors[i],
    y: e.narrative ? 1 : 0,
    w: weights[i],
    fold: foldOf(e.foldKey ?? e.text, options.folds),
  }));
  const extra = [...prototypeRows(prototypes), ...pairRows(stance, vectors, weights, options)];
  const logits = linearGateOof(rows, extra, dim, options);
  const labels = rows.map((r) => r.y);
  const cells = stance.map(stanceCell);
  const linear = calibrateGate(logits, labels, weights, cells);
  const model = fitGate([...rows, ...extra], dim, options.gate.l2);
  if (!sentences) return { model, ...linear };

  const mlpLogits = mlpGateOof(rows, sentences, options);
  const scales = { linear: scaleOf(logits), mlp: scaleOf(mlpLogits) };
  const combined = calibrateGate(
    logits.map((z, i) => combinedGateScore(z, mlpLogits[i], scales)),
    labels,
    weights,
    cells,
  );
  const pays = mlpPays(cells, linear.oof, combined.oof);
  options.log?.(
    `gate MLP: worst ratio ${combined.worst.toFixed(3)} (linear ${linear.worst.toFixed(3)}): ${pays ? "shipped" : "not shipped"}`,
  );
  if (!pays) return { model, ...linear, linear, mlpShipped: false };
  options.log?.("gate MLP final fit");
  const mlp = { model: trainGateMlp(rows, sentences, () => true, GATE_MLP_SEED + options.folds), ...scales };
  return { model, ...combined, mlp, linear, mlpShipped: true };
}

/** Mainstream cells whose false-alarm rate the gate's threshold is chosen on, with each one's allowance. */
const FALSE_ALARM_ALLOWANCE: Record<string, number> = {
  "stance-favor": 0.1,
  climatebert: 0.1,
  "env-claims": 0.1,
  "cf-evidence": 0.1,
  arxiv: 0.1,
  // The written mainstream, rebuttal and mainstream-words texts (issue 23's target: at most 0.08).
  "contrast:none": 0.08,
};
/** Contrarian cells whose miss rate it is chosen on, with each one's allowance. */
const MISS_ALLOWANCE: Record<string, number> = {
  flicc: 0.15,
  "stance-against": 0.15,
  "contrast:narrative": 0.1,
};
const FALSE_ALARM_CELLS = Object.keys(FALSE_ALARM_ALLOWANCE);
const MISS_CELLS = Object.keys(MISS_ALLOWANCE);
export const GATE_THRESHOLD_GRID: readonly number[] = Array.from({ length: 14 }, (_, i) => 0.3 + 0.05 * i);

export const cellShare = (cells: readonly string[], p: readonly number[], c: string, t: number) => {
  let n = 0;
  let k = 0;
  cells.forEach((x, i) => {
    if (x !== c) return;
    n++;
    if (p[i] >= t) k++;
  });
  return k / n;
};

/**
 * The worst ratio of a cell's error to its allowance at threshold `t` on `p`: false alarms over 0.10 on each
 * mainstream source (0.08 on the written non-contrarian texts), misses over 0.15 on FLICC and ClimateStance Against
 * (0.10 on the written contrarian texts); at most 1 meets every target. Cells
 * absent from the data are skipped; none present gives NaN.
 */
export function gateWorstRatio(cells: readonly string[], p: readonly number[], t: number): number {
  const ratios = gateRatios(cells, p, t);
  return ratios.length ? Math.max(...ratios) : Number.NaN;
}

/** Each present target cell's ratio of error to allowance at threshold `t` (gateWorstRatio is their maximum). */
export function gateRatios(cells: readonly string[], p: readonly number[], t: number): number[] {
  const present = (c: string) => cells.includes(c);
  return [
    ...FALSE_ALARM_CELLS.filter(present).map((c) => cellShare(cells, p, c, t) / FALSE_ALARM_ALLOWANCE[c]),
    ...MISS_CELLS.filter(present).map((c) => (1 - cellShare(cells, p, c, t)) / MISS_ALLOWANCE[c]),
  ];
}

/**
 * Whether cell ratios `a` beat `b` worst first (leximin): the worst ratio falls, or the two tie and the next worst
 * decides. A tie on the worst cell alone says nothing of the others, so it must not settle the choice by default.
 */
export function leximinBetter(a: readonly number[], b: readonly number[]): boolean {
  const x = [...a].sort((u, v) => v - u);
  const y = [...b].sort((u, v) => v - u);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] < y[i] - 1e-9) return true;
    if (x[i] > y[i] + 1e-9) return false;
  }
  return false;
}

/** Mainstream cells none of whose false-alarm share a second gate reader may raise by more than MAX_RISE. */
const MAINSTREAM_CELLS = [...FALSE_ALARM_CELLS, "cf-supports"];
const MAX_RISE = 0.01;

/**
 * Whether the gate with the MLP (`withMlp`, calibrated P(narrative) out of fold, threshold folded in) ships over
 * the linear one (`linear`): its worst ratio (gateWorstRatio at 0.5) is lower, and no mainstream source's
 * false-alarm share (Climate-FEVER SUPPORTS claims included) rises by more than 0.01.
 */
export function mlpPays(
  cells: readonly string[],
  linear: readonly number[],
  withMlp: readonly number[],
): boolean {
  const t = NARRATIVE_THRESHOLD;
  if (!(gateWorstRatio(cells, withMlp, t) < gateWorstRatio(cells, linear, t) - 1e-12)) return false;
  return MAINSTREAM_CELLS.filter((c) => cells.includes(c)).every(
    (c) => cellShare(cells, withMlp, c, t) <= cellShare(cells, linear, c, t) + MAX_RISE,
  );
}

/**
 * Worst ratios within this share of the smallest count as a tie, and a tie goes to the higher threshold: naming a
 * narrative on accurate text is the error we weigh most, so when two thresholds are about as close to the targets,
 * the one that names fewer narratives is taken.
 */
export const GATE_THRESHOLD_TIE = 0.05;

/**
 * The out-of-fold threshold on calibrated P(narrative) closest to meeting every target at once: the smallest
 * worst ratio of a cell's error to its allowance (false alarms over 0.10 on each mainstream source, misses over
 * 0.15 on FLICC and ClimateStance Against), the highest threshold within GATE_THRESHOLD_TIE of it. Climate-FEVER
 * SUPPORTS claims are not among them: their label says the evidence supports them, not that they are mainstream,
 * and many are contrarian. Cells absent from the data are skipped; with none present, 0.5.
 */
export function chooseGateThreshold(cells: readonly string[], p: readonly number[]): number {
  const worst = GATE_THRESHOLD_GRID.map((t) => gateWorstRatio(cells, p, t));
  if (worst.some(Number.isNaN)) return 0.5;
  const bound = Math.min(...worst) * (1 + GATE_THRESHOLD_TIE) + 1e-12;
  const best = GATE_THRESHOLD_GRID.filter((_, i) => worst[i] <= bound).at(-1) ?? 0.5;
  return Number(best.toFixed(2));
}

const isGwsd = (e: StanceExample) => e.source === "gwsd-agree" || e.source === "gwsd-disagree";

export async function trainNarrativeModel(
  train: readonly NarrativeExample[],
  allStance: readonly StanceExample[],
  options: TrainOptions = DEFAULT_TRAIN_OPTIONS,
): Promise<NarrativeModelJson> {
  const log = options.log ?? (() => {});
  const has = (f: FeatureFamily) => options.families.includes(f);
  if (has("use") && !options.encoder) throw new Error("the use family needs a sentence encoder");
  const proto = prototypeTexts();
  const descTexts = proto.descriptions;
  if (has("use"))
    log(`embedding ${allStance.length + train.length} training texts with ${options.encoder?.name}`);
  const emb = await embedAll(
    [...descTexts, ...proto.rebuttals, ...allStance.map((e) => e.text), ...train.map((e) => e.text)],
    options,
  );
  const get = (t: string) => emb?.get(t) as Float32Array;
  const prototypes = emb
    ? { descriptions: descTexts.map(get), rebuttals: proto.rebuttals.map(get) }
    : undefined;
  // One vocabulary over every text the model learns from, mainstream included.
  const features = NarrativeFeatures.fit(
    [...new Set([...allStance.map((e) => e.text), ...train.map((e) => e.text)])],
    {
      families: options.families,
      wordMaxFeatures: options.wordMaxFeatures,
      charMaxFeatures: options.charMaxFeatures,
    },
    prototypes,
  );
  log(`features: ${features.dim} dims (${options.families.join("+")})`);
  const vectorOf = (text: string) => features.vector(text, emb?.get(text));

  const gatePrototypes = has("desc")
    ? [
        ...descTexts.map((t) => ({ x: vectorOf(t), narrative: true, w: options.descWeight })),
        ...proto.rebuttals.map((t) => ({ x: vectorOf(t), narrative: false, w: options.descWeight })),
      ]
    : [];
  // linearOnly: the linear gate alone (no sentence-vector reader), as the GWSD cross-validation compares it.
  const fitGateOn = (rows: readonly StanceExample[], linearOnly = false) =>
    trainGate(
      rows,
      rows.map((e) => vectorOf(e.text)),
      features.dim,
      options,
      gatePrototypes,
      emb && !linearOnly ? rows.map((e) => get(e.text)) : undefined,
    );
  // GWSD's news sentences join the gate where cross-validation says they pay: with "cv", the linear gate is fitted
  // with and without them, and they stay when the ratios over the target cells (none of them GWSD) fall, worst first
  // (leximin: on a tie of the worst cell the next worst decides).
  const withoutGwsd = allStance.filter((e) => !isGwsd(e));
  let stance: readonly StanceExample[] = options.gwsd === false ? withoutGwsd : allStance;
  let gwsdCv: { with: number; without: number } | undefined;
  let gate: GateFit | undefined;
  if (options.gwsd === "cv" && withoutGwsd.length < allStance.length) {
    log("GWSD: cross-validating the linear gate with and without it");
    const [withIt, withoutIt] = [fitGateOn(allStance, true), fitGateOn(withoutGwsd, true)];
    gwsdCv = { with: withIt.worst, without: withoutIt.worst };
    const ratios = (rows: readonly StanceExample[], fit: GateFit) =>
      gateRatios(rows.map(stanceCell), fit.oof, NARRATIVE_THRESHOLD);
    const pays = leximinBetter(ratios(allStance, withIt), ratios(withoutGwsd, withoutIt));
    stance = pays ? allStance : withoutGwsd;
    log(
      `GWSD: worst ratio ${gwsdCv.with.toFixed(3)} with, ${gwsdCv.without.toFixed(3)} without${Math.abs(gwsdCv.with - gwsdCv.without) < 1e-9 ? " (a tie: the next-worst cells decide)" : ""}: ${pays ? "used" : "left out"}`,
    );
    // Without sentence vectors the linear gate is the gate: no need to fit it again.
    if (!emb) gate = pays ? withIt : withoutIt;
  }
  gate ??= fitGateOn(stance);

  // The code models learn from texts that carry a narrative: P(group | narrative), P(code | group).
  const foldKeys = new Map(stance.flatMap((e) => (e.foldKey ? [[e.text, e.foldKey] as const] : [])));
  const trainFold = (text: string) => foldOf(foldKeys.get(text) ?? text, options.folds);
  const coded = train.filter((e) => !e.codes.includes(NO_NARRATIVE));
  const vectors = coded.map((e) => vectorOf(e.text));
  const folds = coded.map((e) => trainFold(e.text));
  // CARDS rows (with and without a narrative) get out-of-fold scores too, for the classify rule's threshold.
  const cards = train.filter((e) => e.id.startsWith("cards:"));
  const cardsVectors = cards.map((e) => vectorOf(e.text));
  const cardsFolds = cards.map((e) => trainFold(e.text));
  const cardsOof: NarrativeScores[] = new Array(cards.length);
  // Softmax rows: a multi-label example becomes one row per group (per code), weights summing to 1.
  const groupRows: Row[] = [];
  const codeRows = new Map<number, Row[]>(NARRATIVE_GROUPS.map((g) => [g, []]));
  coded.forEach((e, i) => {
    const groups = [...new Set(e.codes.map(groupOf))];
    for (const g of groups) groupRows.push({ x: vectors[i], y: g - 1, w: 1 / groups.length, fold: folds[i] });
    const subs = e.codes.filter((c) => c.split("_")[1] !== "0");
    for (const c of subs) {
      const g = groupOf(c);
      codeRows.get(g)?.push({ x: vectors[i], y: subCodes(g).indexOf(c), w: 1 / subs.length, fold: folds[i] });
    }
  });
  if (has("desc")) {
    // Each code's description is an example of it: the only examples some codes have.
    DESCRIBED_CODES.forEach((c, k) => {
      const g = groupOf(c);
      const x = vectorOf(descTexts[k]);
      groupRows.push({ x, y: g - 1, w: options.descWeight, fold: -1 });
      if (c.split("_")[1] !== "0") {
        codeRows.get(g)?.push({ x, y: subCodes(g).indexOf(c), w: options.descWeight, fold: -1 });
      }
    });
  }

  // Out-of-fold scores for threshold tuning (the gate is not involved: these texts all carry a narrative).
  const oof: NarrativeScores[] = new Array(coded.length);
  for (let f = 0; f < options.folds; f++) {
    log(`codes fold ${f + 1}/${options.folds}`);
    const m = fitCodes(groupRows, codeRows, features.dim, options.l2, f);
    coded.forEach((_, i) => {
      if (folds[i] === f) oof[i] = scoreVector({ ...m, gate }, vectors[i], emb?.get(coded[i].text));
    });
    cards.forEach((_, i) => {
      if (cardsFolds[i] === f)
        cardsOof[i] = scoreVector({ ...m, gate }, cardsVectors[i], emb?.get(cards[i].text));
    });
  }
  const codeThresholds = tuneAll(coded, oof);
  // The gate's own out-of-fold P(narrative) of each CARDS row (the code scores above use the final gate).
  const gateOof = new Map(stance.map((e, i) => [e.text, gate.oof[i]] as const));
  const scored = cards.flatMap((e, i) => {
    const narrative = gateOof.get(e.text);
    return narrative === undefined ? [] : [{ gold: e.codes, scores: { ...cardsOof[i], narrative } }];
  });
  const classify = chooseClassifyThreshold(scored, codeThresholds, options.fallback);
  log(
    `classify rule: P(narrative) >= ${classify.threshold}, codes ${classify.codes} (out-of-fold CARDS mean F1 ${classify.f1.toFixed(3)}, at 0.5 ${classify.atCheck.toFixed(3)})`,
  );
  const thresholds: Thresholds = {
    ...codeThresholds,
    classifyNarrative: classify.threshold,
    classifyCodes: classify.codes,
  };
  log("final fit");
  const final = fitCodes(groupRows, codeRows, features.dim, options.l2, -2);
  const { encoder: _e, log: _l, ...settings } = options;
  return {
    format: NARRATIVES_FORMAT,
    encoder: has("use") ? options.encoder?.name : undefined,
    features: features.toJSON(),
    gate: {
      model: gate.model.toJSON(),
      platt: gate.platt,
      ...(gate.mlp ? { mlp: { ...gate.mlp, model: gate.mlp.model.toJSON() } } : {}),
    },
    group: final.group.toJSON(),
    codes: Object.fromEntries(
      [...final.codes].map(([g, m]) => [String(g), { codes: m.codes, model: m.model.toJSON() }]),
    ),
    thresholds,
    fallback: options.fallback,
    trainedOn: { ...countBySource(train), ...stanceCounts(stance) },
    crossValidation: {
      ...cvFigures(stance, gate),
      ...(gate.linear ? { linear: cvFigures(stance, gate.linear), mlpShipped: gate.mlpShipped } : {}),
      gwsd: {
        used: stance.some(isGwsd),
        ...(gwsdCv ? { worstWith: gwsdCv.with, worstWithout: gwsdCv.without } : {}),
      },
      classify: {
        threshold: classify.threshold,
        codes: classify.codes,
        cardsMeanF1: classify.f1,
        cardsMeanF1AtCheck: classify.atCheck,
      },
    },
    settings,
  };
}

/** Candidate thresholds of the classify rule on P(narrative): from the check rule's 0.5 down. */
export const CLASSIFY_THRESHOLD_GRID: readonly number[] = Array.from(
  { length: 10 },
  (_, i) => 0.5 - 0.05 * i,
);

/** The classify rule's ways of naming codes, tried in this order (ties keep the earlier: the hierarchy first). */
export const CLASSIFY_CODES: readonly ClassifyCodes[] = ["group-code", "argmax", "single"];

/**
 * The classify rule: the threshold on P(narrative) of CLASSIFY_THRESHOLD_GRID and the way of naming codes
 * (CLASSIFY_CODES, starting from the model's fallback) whose decisions give the best mean F1 over the codes present
 * on `rows` (out-of-fold scores of the CARDS training rows), the higher threshold and the earlier way on ties.
 * `atCheck` is that F1 at the check rule's threshold with the model's fallback. With no rows, the check rule's.
 */
export function chooseClassifyThreshold(
  rows: readonly { gold: readonly string[]; scores: NarrativeScores }[],
  thresholds: Thresholds,
  fallback: Fallback,
): { threshold: number; codes: ClassifyCodes; f1: number; atCheck: number } {
  const f1At = (t: number, codes: ClassifyCodes) =>
    meanF1OverPresent(
      rows.map((r) =>
        decide(r.scores, { ...thresholds, classifyNarrative: t, classifyCodes: codes }, fallback, "classify"),
      ),
      rows.map((r) => r.gold),
    );
  const atCheck = rows.length ? f1At(NARRATIVE_THRESHOLD, fallback) : 0;
  let best: { threshold: number; codes: ClassifyCodes; f1: number } = {
    threshold: NARRATIVE_THRESHOLD,
    codes: fallback,
    f1: atCheck,
  };
  if (rows.length === 0) return { ...best, atCheck };
  const ways = [fallback, ...CLASSIFY_CODES.filter((c) => c !== fallback)];
  for (const codes of ways)
    for (const t of CLASSIFY_THRESHOLD_GRID) {
      const f1 = f1At(t, codes);
      if (f1 > best.f1 + 1e-12) best = { threshold: Number(t.toFixed(2)), codes, f1 };
    }
  return { ...best, atCheck };
}

/** A calibrated gate's out-of-fold figures for the card: threshold, share given a narrative per cell, worst ratio. */
const cvFigures = (stance: readonly StanceExample[], g: GateCalibration) => ({
  threshold: g.threshold,
  gate: flaggedShareByGroup(
    stance.map(stanceCell),
    g.oof.map((p) => p >= NARRATIVE_THRESHOLD),
  ),
  worst: g.worst,
});

/** The cell a stance row is reported in: its source, and for a source with both classes, its class. */
export const stanceCell = (e: StanceExample): string =>
  e.source === "cards" || e.source === "climatecheck" || e.source === "contrast" || e.source === "judged"
    ? `${e.source}:${e.narrative ? "narrative" : "none"}`
    : e.source;

/** Stance rows per source and class, for the card. */
export function stanceCounts(stance: readonly StanceExample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of stance) {
    const k = `stance:${e.source}:${e.narrative ? "narrative" : "none"}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * Group thresholds on P(group | narrative) over texts with a narrative; code thresholds on the texts of the code's
 * group (as the hierarchy uses them).
 */
export function tuneAll(train: readonly NarrativeExample[], scores: readonly NarrativeScores[]): Thresholds {
  const group = [0, ...NARRATIVE_GROUPS.map((g) => tuneGroup(train, scores, g))];
  const code: Record<string, number> = {};
  for (const g of NARRATIVE_GROUPS) {
    const idx = train.map((_, i) => i).filter((i) => train[i].codes.some((c) => groupOf(c) === g));
    for (const c of subCodes(g)) {
      code[c] = tuneThreshold(
        idx.map((i) => scores[i].code[c] ?? 0),
        idx.map((i) => train[i].codes.includes(c)),
      ).threshold;
    }
  }
  return { group, code };
}

function tuneGroup(train: readonly NarrativeExample[], scores: readonly NarrativeScores[], g: Group): number {
  return tuneThreshold(
    scores.map((s) => s.group[g]),
    train.map((e) => e.codes.some((c) => groupOf(c) === g)),
  ).threshold;
}

/** Codes with at least one training example, for the card. */
export function codesSeen(train: readonly NarrativeExample[]): string[] {
  const seen = new Set(train.flatMap((e) => e.codes));
  return NARRATIVES.map((n) => n.code).filter((c) => seen.has(c));
}
