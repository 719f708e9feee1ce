/**
 * Class-weighted argmax: predict argmax_k w_k * p_k. Tuning the weights on out-of-fold probabilities trades the
 * classes against each other for a metric (e.g. weighted F1) without touching the calibrated probabilities.
 */

export function weightedArgmax(p: ArrayLike<number>, weights: readonly number[]): number {
  let best = 0;
  for (let k = 1; k < p.length; k++) if (p[k] * weights[k] > p[best] * weights[best]) best = k;
  return best;
}

/** Index of the largest entry (ties: the first). */
export function argmax(p: ArrayLike<number>): number {
  let best = 0;
  for (let k = 1; k < p.length; k++) if (p[k] > p[best]) best = k;
  return best;
}

/** Default grid per free weight (the last class keeps weight 1). */
export const WEIGHT_GRID: readonly number[] = [
  0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75, 2, 2.5, 3,
];

/**
 * The weights (last class fixed at 1, the others from the grid) that maximise `objective` of the decisions;
 * ties keep the first found, grid order, so the result is deterministic. Exhaustive: grid^(classes-1) trials.
 */
export function tuneDecisionWeights(
  probs: readonly ArrayLike<number>[],
  objective: (decisions: number[]) => number,
  classes: number,
  grid: readonly number[] = WEIGHT_GRID,
): { weights: number[]; objective: number } {
  let best = { weights: new Array(classes).fill(1), objective: Number.NEGATIVE_INFINITY };
  const w = new Array(classes).fill(1);
  const walk = (k: number) => {
    if (k === classes - 1) {
      const value = objective(probs.map((p) => weightedArgmax(p, w)));
      if (value > best.objective + 1e-12) best = { weights: [...w], objective: value };
      return;
    }
    for (const g of grid) {
      w[k] = g;
      walk(k + 1);
    }
  };
  walk(0);
  return best;
}
