/** Sparse feature vectors: sorted indices and their values. */

export interface SparseVector {
  indices: Int32Array | number[];
  values: Float32Array | number[];
}

/** Builds a sparse vector from index -> value pairs (indices sorted, zeros dropped). */
export function sparseFromMap(map: Map<number, number>): SparseVector {
  const keys = [...map.keys()].filter((k) => map.get(k) !== 0).sort((a, b) => a - b);
  const indices = new Int32Array(keys.length);
  const values = new Float32Array(keys.length);
  keys.forEach((k, i) => {
    indices[i] = k;
    values[i] = map.get(k) ?? 0;
  });
  return { indices, values };
}

/** A dense vector as a sparse one (all positions kept), so one code path serves both. */
export function sparseFromDense(x: ArrayLike<number>): SparseVector {
  const indices = new Int32Array(x.length);
  const values = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) {
    indices[i] = i;
    values[i] = x[i];
  }
  return { indices, values };
}

export function l2Norm(v: SparseVector): number {
  let s = 0;
  for (let i = 0; i < v.values.length; i++) s += v.values[i] * v.values[i];
  return Math.sqrt(s);
}

/** Scales a vector to unit L2 norm (a zero vector stays zero). */
export function l2Normalise(v: SparseVector): SparseVector {
  const n = l2Norm(v);
  if (n === 0) return v;
  const values = new Float32Array(v.values.length);
  for (let i = 0; i < values.length; i++) values[i] = v.values[i] / n;
  return { indices: v.indices, values };
}

export function dot(a: SparseVector, b: SparseVector): number {
  let i = 0;
  let j = 0;
  let s = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const ai = a.indices[i];
    const bj = b.indices[j];
    if (ai === bj) s += a.values[i++] * b.values[j++];
    else if (ai < bj) i++;
    else j++;
  }
  return s;
}

/** Concatenates blocks into one vector; each block's indices are shifted by the widths before it. */
export function concatSparse(blocks: { vector: SparseVector; width: number }[]): SparseVector {
  let nnz = 0;
  for (const b of blocks) nnz += b.vector.indices.length;
  const indices = new Int32Array(nnz);
  const values = new Float32Array(nnz);
  let offset = 0;
  let k = 0;
  for (const { vector, width } of blocks) {
    for (let i = 0; i < vector.indices.length; i++) {
      if (vector.indices[i] >= width)
        throw new RangeError(`index ${vector.indices[i]} outside block width ${width}`);
      indices[k] = vector.indices[i] + offset;
      values[k++] = vector.values[i];
    }
    offset += width;
  }
  return { indices, values };
}
