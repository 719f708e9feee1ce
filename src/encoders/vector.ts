/** Small dense-vector helpers shared by every encoder and their users. */

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`dot: length mismatch (${a.length} vs ${b.length})`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Cosine similarity; 0 when either vector is all zeros (no direction to compare). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`cosine: length mismatch (${a.length} vs ${b.length})`);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

/** Scales v to unit length in place (a zero vector stays zero) and returns it. */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  if (s > 0) {
    const k = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i] *= k;
  }
  return v;
}
