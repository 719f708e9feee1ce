/**
 * Bootstrap intervals, deterministic (seeded): over items (`itemInterval`: claims or texts resampled with
 * replacement), and paired over groups (`groupResamples` + `bootstrapInterval`: whole claims resampled, so a
 * claim's pairs stay together, the same resamples shared by the systems compared).
 */
import { mulberry32 } from "../learning/random.ts";

/** Row indices of each resample: whole groups drawn with replacement, as many as there are groups. */
export function groupResamples(groupOf: readonly string[], resamples = 1000, seed = 2026): number[][] {
  const groups = [...new Set(groupOf)];
  const rowsOf = new Map<string, number[]>();
  groupOf.forEach((g, r) => {
    rowsOf.set(g, [...(rowsOf.get(g) ?? []), r]);
  });
  const rng = mulberry32(seed);
  return Array.from({ length: resamples }, () =>
    groups.flatMap(() => rowsOf.get(groups[Math.floor(rng() * groups.length)]) ?? []),
  );
}

/** The 2.5th and 97.5th percentiles of `statistic` over the resamples (of 1,000: the 26th and the 975th value). */
export function bootstrapInterval(
  samples: readonly number[][],
  statistic: (rows: readonly number[]) => number,
): [number, number] {
  const values = samples.map(statistic).sort((a, b) => a - b);
  const n = values.length;
  return [values[Math.round(0.025 * n)], values[Math.max(0, Math.round(0.975 * n) - 1)]];
}

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
 * The statistic over items 0..n-1 (claims, texts), and its percentile interval over `resamples` resamples of the
 * items with replacement (`statistic` gets the indices of one sample, duplicates included).
 */
export function itemInterval(
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
