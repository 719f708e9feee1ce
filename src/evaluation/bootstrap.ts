/**
 * Paired bootstrap over groups (claims): resample whole claims with replacement, so a claim's pairs stay together,
 * and read the 95% interval of a statistic of the resampled rows. Deterministic (seeded).
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
