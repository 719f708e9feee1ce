/** Feature standardisation for dense features: (x - mean) / std, fitted on training rows only. */

export interface Standardiser {
  mean: number[];
  std: number[];
}

export function fitStandardiser(rows: readonly ArrayLike<number>[]): Standardiser {
  if (rows.length === 0) throw new Error("fitStandardiser: no rows");
  const d = rows[0].length;
  const mean = new Array(d).fill(0);
  const sq = new Array(d).fill(0);
  for (const r of rows) {
    if (r.length !== d) throw new Error("fitStandardiser: rows of different lengths");
    for (let j = 0; j < d; j++) mean[j] += r[j];
  }
  for (let j = 0; j < d; j++) mean[j] /= rows.length;
  for (const r of rows) for (let j = 0; j < d; j++) sq[j] += (r[j] - mean[j]) ** 2;
  // A constant feature keeps std 1 so it maps to 0 instead of dividing by zero.
  const std = sq.map((s) => {
    const v = Math.sqrt(s / rows.length);
    return v > 1e-12 ? v : 1;
  });
  return { mean, std };
}

export function standardise(x: ArrayLike<number>, s: Standardiser): Float32Array {
  const out = new Float32Array(x.length);
  for (let j = 0; j < x.length; j++) out[j] = (x[j] - s.mean[j]) / s.std[j];
  return out;
}
