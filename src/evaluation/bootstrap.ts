/** Percentile bootstrap confidence intervals over items (claims), seeded so every report is reproducible. */
import { mulberry32 } from "../learning/random.ts";

export interface BootstrapOptions {
  /** Resamples (default 1000). */
  resamples?: number;
  seed?: number;
  /** Coverage of the interval (default 0.95). */
  level?: number;
}

export interface Interval {
  /** The statistic on all items. */
  value: number;
  low: number;
  high: number;
}

/**
 * The statistic over items 0..n-1, and its percentile interval over `resamples` resamples with replacement
 * (`statistic` gets the indices of one sample, duplicates included).
 */
export function bootstrapInterval(
  n: number,
  statistic: (indices: number[]) => number,
  options: BootstrapOptions = {},
): Interval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const rng = mulberry32(options.seed ?? 1);
  const all = Array.from({ length: n }, (_, i) => i);
  const value = statistic(all);
  if (n === 0) return { value, low: value, high: value };
  const stats = new Float64Array(resamples);
  const sample = new Array<number>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = Math.floor(rng() * n);
    stats[r] = statistic(sample);
  }
  stats.sort();
  const at = (q: number) => stats[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))];
  const tail = (1 - level) / 2;
  return { value, low: at(tail), high: at(1 - tail) };
}
