/** Percentile bootstrap intervals, deterministic (seeded), for benchmark figures. */
import { mulberry32 } from "../learning/random.ts";

export interface Interval {
  value: number;
  low: number;
  high: number;
}

/**
 * The statistic on all n items and its 95% percentile interval over `resamples` resamples of the item indices with
 * replacement. `statistic` receives the indices of one sample.
 */
export function bootstrapInterval(
  n: number,
  statistic: (indices: readonly number[]) => number,
  options: { resamples?: number; seed?: number; level?: number } = {},
): Interval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const rng = mulberry32(options.seed ?? 2026);
  const all = Array.from({ length: n }, (_, i) => i);
  const values: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample = all.map(() => Math.floor(rng() * n));
    values.push(statistic(sample));
  }
  values.sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(values.length - 1, Math.max(0, Math.floor(q * values.length)))];
  return { value: statistic(all), low: at((1 - level) / 2), high: at(1 - (1 - level) / 2) };
}
