/**
 * Dense vectors of one encoder, stored as a flat Float32 file (n x dim, docno order). Small indexes are searched
 * exhaustively (n x dim multiply-adds: about 2.6 M at 5k abstracts, a few ms). Large ones carry an IVF index
 * (src/index/ivf.ts, built at ingest) and scan only the lists nearest the query: at 400k x 512 exhaustive search
 * costs about half a second per claim (see BENCHMARKS.md, retrieval-scale).
 */
import { readFileSync } from "node:fs";
import { type Hit, topHits } from "./bm25.ts";
import { type Ivf, probeLists } from "./ivf.ts";

export class VectorSet {
  readonly dim: number;
  readonly size: number;
  readonly ivf?: Ivf;
  private readonly data: Float32Array;
  private readonly scores: Float32Array;
  private readonly ids: Uint32Array;

  constructor(path: string, dim: number, size: number, ivf?: Ivf) {
    const buf = readFileSync(path);
    if (buf.byteLength !== size * dim * 4) {
      throw new Error(`${path}: expected ${size} x ${dim} floats, found ${buf.byteLength} bytes`);
    }
    const data =
      buf.byteOffset % 4 === 0
        ? new Float32Array(buf.buffer, buf.byteOffset, size * dim)
        : new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    if (ivf && (ivf.n !== size || ivf.dim !== dim))
      throw new Error(`${path}: the IVF index covers ${ivf.n} x ${ivf.dim}, the vectors ${size} x ${dim}`);
    this.data = data;
    this.dim = dim;
    this.size = size;
    this.ivf = ivf;
    this.scores = new Float32Array(size);
    this.ids = new Uint32Array(size);
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

  /** Top k by dot product, best first: through the IVF lists when the set has them, else exact. */
  search(query: Float32Array, k: number, probe?: number): Hit[] {
    return this.ivf ? this.searchIvf(query, k, probe ?? this.ivf.probe) : this.exhaustive(query, k);
  }

  /** Exact top k by dot product, best first. */
  exhaustive(query: Float32Array, k: number): Hit[] {
    const { dim, data, scores, ids } = this;
    for (let d = 0, base = 0; d < this.size; d++, base += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += query[j] * data[base + j];
      scores[d] = s;
      ids[d] = d;
    }
    return topHits(ids, this.size, scores, k);
  }

  /** Top k among the docs of the `probe` lists whose centroids are nearest the query. */
  private searchIvf(query: Float32Array, k: number, probe: number): Hit[] {
    const ivf = this.ivf as Ivf;
    const { dim, data, scores, ids } = this;
    let m = 0;
    for (const l of probeLists(ivf, query, probe)) {
      for (let i = ivf.start[l]; i < ivf.start[l + 1]; i++) {
        const d = ivf.docs[i];
        // The same sum as exhaustive search, so probing every list gives exactly its answer.
        let s = 0;
        for (let j = 0, base = d * dim; j < dim; j++) s += query[j] * data[base + j];
        scores[d] = s;
        ids[m++] = d;
      }
    }
    return topHits(ids, m, scores, k);
  }
}
