/** Decision thresholds tuned on dev scores to maximise F1, one per class (for tuning, not for reporting). */

/** Default grid: 0.02, 0.04, ..., 0.98. */
export const DEFAULT_GRID: readonly number[] = Array.from({ length: 49 }, (_, i) =>
  Number(((i + 1) * 0.02).toFixed(2)),
);

export interface TunedThreshold {
  threshold: number;
  f1: number;
}

/** F1 of "score >= threshold" against boolean gold. */
export function f1At(scores: readonly number[], gold: readonly boolean[], threshold: number): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (let i = 0; i < scores.length; i++) {
    const p = scores[i] >= threshold;
    if (p && gold[i]) tp++;
    else if (p) fp++;
    else if (gold[i]) fn++;
  }
  return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
}

/**
 * The grid threshold with the best F1. Ties: the middle of the first run of best thresholds, which sits away from
 * the edges of the plateau and so generalises better than either end. No positives: the highest threshold.
 */
export function tuneThreshold(
  scores: readonly number[],
  gold: readonly boolean[],
  grid: readonly number[] = DEFAULT_GRID,
): TunedThreshold {
  if (scores.length !== gold.length) throw new Error("tuneThreshold: scores and gold lengths differ");
  if (grid.length === 0) throw new Error("tuneThreshold: empty grid");
  const sorted = [...grid].sort((a, b) => a - b);
  const f1s = sorted.map((t) => f1At(scores, gold, t));
  const best = Math.max(...f1s);
  if (best === 0) return { threshold: sorted[sorted.length - 1], f1: 0 };
  const start = f1s.indexOf(best);
  let end = start;
  while (end + 1 < f1s.length && f1s[end + 1] === best) end++;
  return { threshold: sorted[Math.floor((start + end) / 2)], f1: best };
}

/** One threshold per class: scores[i][c] and gold[i][c] for example i and class c. */
export function tuneThresholds(
  scores: readonly (readonly number[])[],
  gold: readonly (readonly boolean[])[],
  grid: readonly number[] = DEFAULT_GRID,
): TunedThreshold[] {
  if (scores.length === 0) return [];
  const classes = scores[0].length;
  return Array.from({ length: classes }, (_, c) =>
    tuneThreshold(
      scores.map((s) => s[c]),
      gold.map((g) => g[c]),
      grid,
    ),
  );
}
