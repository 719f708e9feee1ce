/**
 * Dense vectors of one encoder, stored as a flat Float32 file (n x dim, docno order) and searched exhaustively.
 * Exact search costs n x dim multiply-adds per query: about 2.6 M at 5k abstracts (a few ms); at 400k it is the
 * part to watch (see BENCHMARKS.md, retrieval-scale).
 */
import { readFileSync } from "node:fs";
import { topK } from "./bm25.ts";

export class VectorSet {
  readonly dim: number;
  readonly size: number;
  private readonly data: Float32Array;
  private readonly scores: Float32Array;

  constructor(path: string, dim: number, size: number) {
    const buf = readFileSync(path);
    if (buf.byteLength !== size * dim * 4) {
      throw new Error(`${path}: expected ${size} x ${dim} floats, found ${buf.byteLength} bytes`);
    }
    this.data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    this.dim = dim;
    this.size = size;
    this.scores = new Float32Array(size);
  }

  vector(docno: number): Float32Array {
    return this.data.subarray(docno * this.dim, (docno + 1) * this.dim);
  }

  /** Dot product of a query with one doc (cosine when both are L2-normalised). */
  score(query: Float32Array, docno: number): number {
    const base = docno * this.dim;
    let s = 0;
    for (let j = 0; j < this.dim; j++) s += query[j] * this.data[base + j];
    return s;
  }

  /** Exact top k by dot product, best first. */
  search(query: Float32Array, k: number): { docno: number; score: number }[] {
    const { dim, data, scores } = this;
    for (let d = 0, base = 0; d < this.size; d++, base += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += query[j] * data[base + j];
      scores[d] = s;
    }
    const all = new Uint32Array(this.size);
    for (let i = 0; i < all.length; i++) all[i] = i;
    return topK(all, scores, k);
  }
}
