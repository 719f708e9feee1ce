/**
 * How much our own pairs weigh in the pair model, chosen by cross-validation on train (the training's own
 * out-of-fold predictions, folds by claim and by the abstract claims were written from): the weight with the best
 * out-of-fold weighted F1 on the judged own pairs (claims as people post them; on all own pairs when none is
 * judged), among those that keep SciFact's and Climate-FEVER's out-of-fold weighted F1 within GUARD of their value
 * without own pairs (weight 0). Not on the written claims: their refuted claims are mostly negations, and a
 * weight chosen on them taught the model that a negated claim is refuted (judged out-of-fold Refutes share of
 * negated claims 0.017 against 0.004 at weight 4,
 * the weight chosen on all own pairs, 2026-12-03).
 */

import { verificationF1 } from "../evaluation/metrics.ts";
import type { Label } from "../types.ts";
import type { Source, SourcedExample } from "./examples.ts";
import { DEFAULT_PAIR_GROUPS } from "./features.ts";
import type { TrainedVerification } from "./train.ts";

export const OWN_WEIGHT_GRID = [0, 0.05, 0.1, 0.2, 0.5, 1, 2, 4] as const;
/** Largest out-of-fold weighted F1 drop allowed on SciFact or Climate-FEVER. */
export const GUARD = 0.005;
const SOURCES: Source[] = ["own", "scifact", "climate-fever"];

export interface WeightTrial {
  own: number;
  /** Out-of-fold weighted F1 per source. */
  oof: Record<Source, number>;
  /** Out-of-fold weighted F1 on the judged own pairs (NaN when none is judged): what the weight is chosen by. */
  judged: number;
  /** Within the guard on SciFact and Climate-FEVER. */
  guarded: boolean;
}

export interface WeightChoice {
  trials: WeightTrial[];
  chosen: WeightTrial;
  /** The model and calibration refitted with the chosen weight. */
  refitted: ReturnType<TrainedVerification["refit"]>;
}

/** Indices of the judged own pairs (claims as people post them). */
const judgedRows = (train: readonly SourcedExample[]) =>
  train.flatMap((e, i) => (e.source === "own" && e.judged ? [i] : []));

/** Weighted F1 of out-of-fold labels on some train rows; NaN when there are none. */
function rowsF1(
  rows: readonly number[],
  oofLabels: readonly Label[],
  train: readonly SourcedExample[],
): number {
  return rows.length
    ? verificationF1(
        rows.map((i) => oofLabels[i]),
        rows.map((i) => train[i].label),
      ).weighted
    : Number.NaN;
}

export function chooseOwnWeight(
  trained: TrainedVerification,
  train: readonly SourcedExample[],
  grid: readonly number[] = OWN_WEIGHT_GRID,
): WeightChoice {
  const judged = judgedRows(train);
  const bySource = SOURCES.map((s) => [s, train.flatMap((e, i) => (e.source === s ? [i] : []))] as const);
  const fits = grid.map((own) => {
    const refitted = trained.refit(DEFAULT_PAIR_GROUPS, { sourceWeights: { own } });
    const oof = Object.fromEntries(
      bySource.map(([s, rows]) => [s, rowsF1(rows, refitted.calibration.oofLabels, train)]),
    ) as Record<Source, number>;
    return { own, oof, judged: rowsF1(judged, refitted.calibration.oofLabels, train), refitted };
  });
  const reference = fits.find((f) => f.own === 0)?.oof;
  // A source without train pairs (NaN) does not guard.
  const within = (oof: Record<Source, number>, s: Source) =>
    !reference || Number.isNaN(reference[s]) || oof[s] >= reference[s] - GUARD;
  const trials: WeightTrial[] = fits.map((f) => ({
    own: f.own,
    oof: f.oof,
    judged: f.judged,
    guarded: within(f.oof, "scifact") && within(f.oof, "climate-fever"),
  }));
  // The best guarded trial (ties: the smaller weight); with no own pairs, the first.
  const score = (t: WeightTrial) => (Number.isNaN(t.judged) ? t.oof.own : t.judged);
  let best = 0;
  trials.forEach((t, i) => {
    if (t.guarded && (!trials[best].guarded || score(t) > score(trials[best]))) best = i;
  });
  return { trials, chosen: trials[best], refitted: fits[best].refitted };
}

/** Sample weights of SciFact and Climate-FEVER in the built-in corpus's pair model tried (null: no such model). */
export const BUILTIN_OTHERS_GRID = [null, 0, 0.1, 1] as const;

export interface BuiltinTrial {
  /** null: no pair model of its own for the built-in corpus (its abstracts go to the multi-sentence model). */
  others: number | null;
  /** Out-of-fold weighted F1 on the judged own train pairs (claims as people post them). */
  judgedF1: number;
  /** Out-of-fold Supports / Refutes labels given on them. */
  decisive: number;
}

export interface BuiltinChoice {
  trials: BuiltinTrial[];
  chosen: BuiltinTrial;
  refitted: ReturnType<TrainedVerification["refit"]>;
}

/**
 * Whether the built-in corpus's abstracts get a pair model of their own (train.ts builtinKind), and how much
 * SciFact and Climate-FEVER weigh in it: the trial with the best out-of-fold weighted F1 on the judged own train
 * pairs (ties: the earlier trial), the own weight in the other models fixed at `own`. SciFact's and Climate-FEVER's
 * models and decisions are the same in every trial.
 */
export function chooseBuiltinKind(
  trained: TrainedVerification,
  train: readonly SourcedExample[],
  own: number,
  grid: readonly (number | null)[] = BUILTIN_OTHERS_GRID,
  /** The refit without a built-in model at weight `own`, when already made (chooseOwnWeight's). */
  without?: ReturnType<TrainedVerification["refit"]>,
): BuiltinChoice {
  const judged = judgedRows(train);
  const fits = grid.map((others) => {
    const refitted =
      others === null && without
        ? without
        : trained.refit(DEFAULT_PAIR_GROUPS, {
            sourceWeights: { own },
            ...(others === null ? {} : { builtinKind: { others } }),
          });
    const oofLabels = refitted.calibration.oofLabels;
    const trial: BuiltinTrial = {
      others,
      judgedF1: rowsF1(judged, oofLabels, train),
      decisive: judged.filter((i) => oofLabels[i] !== "Not Enough Information").length,
    };
    return { trial, refitted };
  });
  let best = 0;
  fits.forEach((f, i) => {
    if (f.trial.judgedF1 > fits[best].trial.judgedF1) best = i;
  });
  return { trials: fits.map((f) => f.trial), chosen: fits[best].trial, refitted: fits[best].refitted };
}
