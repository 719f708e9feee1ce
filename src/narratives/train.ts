/**
 * Trains the hierarchical narratives model: a softmax over groups and one softmax over the sub-codes of each
 * group, L-BFGS logistic regressions on the chosen feature families. Thresholds (per group, per code) are tuned
 * on out-of-fold scores of the training set, so the dev split stays untouched for reporting. Deterministic.
 */
import { type Features, type LogisticModel, trainLogistic } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { hashUnit } from "../learning/split.ts";
import { tuneThreshold } from "../learning/thresholds.ts";
import { type Group, groupOf, NARRATIVES, subCodes } from "../taxonomy/cards.ts";
import type { NarrativeExample } from "../types.ts";
import { countBySource, splitKey } from "./data.ts";
import { type Fallback, NARRATIVE_GROUPS, type NarrativeScores, type Thresholds } from "./decide.ts";
import { DESCRIBED_CODES, descriptionText, type FeatureFamily, NarrativeFeatures } from "./features.ts";
import { type NarrativeModelJson, scoreVector, type TextEmbedder } from "./model.ts";

export interface TrainOptions {
  families: FeatureFamily[];
  /** Needed when families include "use". */
  encoder?: TextEmbedder;
  fallback: Fallback;
  l2: number;
  /** Weight of each taxonomy description used as a training example (with the "desc" family). */
  descWeight: number;
  /** Folds for the out-of-fold threshold tuning. */
  folds: number;
  wordMaxFeatures: number;
  charMaxFeatures: number;
  log?: (msg: string) => void;
}

export const DEFAULT_TRAIN_OPTIONS: TrainOptions = {
  families: ["word", "char", "desc", "use"],
  fallback: "group-code",
  l2: 1e-4,
  descWeight: 2,
  folds: 4,
  wordMaxFeatures: 6000,
  charMaxFeatures: 10000,
};

/** One training row of a softmax: a feature vector, a class and a weight. */
interface Row {
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

interface Fitted {
  group: LogisticModel;
  codes: Map<number, { codes: string[]; model: LogisticModel }>;
}

function fitAll(
  groupRows: Row[],
  codeRows: Map<number, Row[]>,
  dim: number,
  l2: number,
  skipFold: number,
): Fitted {
  const keep = (r: Row) => r.fold !== skipFold;
  const group = fit(groupRows.filter(keep), 6, dim, l2);
  const codes = new Map<number, { codes: string[]; model: LogisticModel }>();
  for (const g of NARRATIVE_GROUPS) {
    const subs = subCodes(g);
    codes.set(g, { codes: subs, model: fit((codeRows.get(g) ?? []).filter(keep), subs.length, dim, l2) });
  }
  return { group, codes };
}

export async function trainNarrativeModel(
  train: readonly NarrativeExample[],
  options: TrainOptions = DEFAULT_TRAIN_OPTIONS,
): Promise<NarrativeModelJson> {
  const log = options.log ?? (() => {});
  const has = (f: FeatureFamily) => options.families.includes(f);
  if (has("use") && !options.encoder) throw new Error("the use family needs a sentence encoder");
  const descTexts = DESCRIBED_CODES.map(descriptionText);
  let descEmb: Float32Array[] | undefined;
  let trainEmb: Float32Array[] | undefined;
  if (has("use") && options.encoder) {
    log(`embedding ${train.length} training texts with ${options.encoder.name}`);
    descEmb = await options.encoder.embed(descTexts);
    trainEmb = await options.encoder.embed(train.map((e) => e.text));
  }
  const features = NarrativeFeatures.fit(
    train.map((e) => e.text),
    {
      families: options.families,
      wordMaxFeatures: options.wordMaxFeatures,
      charMaxFeatures: options.charMaxFeatures,
    },
    descEmb,
  );
  log(`features: ${features.dim} dims (${options.families.join("+")})`);
  const vectors = train.map((e, i) => features.vector(e.text, trainEmb?.[i]));
  const folds = train.map((e) => Math.floor(hashUnit(splitKey(e.text), "narratives-folds") * options.folds));

  // Softmax rows: a multi-label example becomes one row per group (per code), weights summing to 1.
  const groupRows: Row[] = [];
  const codeRows = new Map<number, Row[]>(NARRATIVE_GROUPS.map((g) => [g, []]));
  train.forEach((e, i) => {
    const groups = [...new Set(e.codes.map(groupOf))];
    for (const g of groups) groupRows.push({ x: vectors[i], y: g, w: 1 / groups.length, fold: folds[i] });
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
      const x = features.vector(descTexts[k], descEmb?.[k]);
      groupRows.push({ x, y: g, w: options.descWeight, fold: -1 });
      if (c.split("_")[1] !== "0") {
        codeRows.get(g)?.push({ x, y: subCodes(g).indexOf(c), w: options.descWeight, fold: -1 });
      }
    });
  }

  // Out-of-fold scores for threshold tuning.
  const oof: NarrativeScores[] = new Array(train.length);
  for (let f = 0; f < options.folds; f++) {
    log(`fold ${f + 1}/${options.folds}`);
    const m = fitAll(groupRows, codeRows, features.dim, options.l2, f);
    train.forEach((_, i) => {
      if (folds[i] === f) oof[i] = scoreVector(m, vectors[i]);
    });
  }
  const thresholds = tuneAll(train, oof);
  log("final fit");
  const final = fitAll(groupRows, codeRows, features.dim, options.l2, -2);
  const { encoder: _e, log: _l, ...settings } = options;
  return {
    format: "climatecheck-narratives/1",
    encoder: has("use") ? options.encoder?.name : undefined,
    features: features.toJSON(),
    group: final.group.toJSON(),
    codes: Object.fromEntries(
      [...final.codes].map(([g, m]) => [String(g), { codes: m.codes, model: m.model.toJSON() }]),
    ),
    thresholds,
    fallback: options.fallback,
    trainedOn: countBySource(train),
    settings,
  };
}

/** Group thresholds on all examples; code thresholds on the examples of the code's group (as the hierarchy uses them). */
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
