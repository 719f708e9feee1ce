/**
 * Dense vectors of one encoder, stored as a flat Float32 file (n x dim, docno order). Small indexes are searched
 * exhaustively (n x dim multiply-adds: about 2.6 M at 5k abstracts, a few ms). Large ones carry an IVF index
 * (src/index/ivf.ts, built at ingest) and scan only the lists nearest the query: at 400k x 512 exhaustive search
 * costs about half a second per claim (see BENCHMARKS.md, retrieval-scale). With IVF the vectors are held in list
 * order, so each probed list is one sequential scan (in docno order they were scattered over 800 MB, and the
 * scan ran at less than half the speed of an exhaustive one).
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { type Hit, topHits } from "./bm25.ts";
import { dotRows, type Ivf, probeLists } from "./ivf.ts";

/** Rows read at a time when loading vectors into list order. */
const CHUNK_ROWS = 4096;

export class VectorSet {
  readonly dim: number;
  readonly size: number;
  readonly ivf?: Ivf;
  /** Vectors by row: docno order without IVF, list order with it. */
  private readonly data: Float32Array;
  /** Row of each docno (IVF only). */
  private readonly row?: Uint32Array;
  private readonly scores: Float32Array;
  private readonly ids: Uint32Array;

  constructor(path: string, dim: number, size: number, ivf?: Ivf) {
    this.dim = dim;
    this.size = size;
    this.scores = new Float32Array(size);
    this.ids = new Uint32Array(size);
    if (!ivf) {
      const buf = readFileSync(path);
      if (buf.byteLength !== size * dim * 4) {
        throw new Error(`${path}: expected ${size} x ${dim} floats, found ${buf.byteLength} bytes`);
      }
      this.data =
        buf.byteOffset % 4 === 0
          ? new Float32Array(buf.buffer, buf.byteOffset, size * dim)
          : new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
      return;
    }
    if (ivf.n !== size || ivf.dim !== dim)
      throw new Error(`${path}: the IVF index covers ${ivf.n} x ${ivf.dim}, the vectors ${size} x ${dim}`);
    this.ivf = ivf;
    const row = new Uint32Array(size);
    for (let r = 0; r < size; r++) row[ivf.docs[r]] = r;
    this.row = row;
    // Read in chunks and place each vector at its row: no second full copy in memory.
    const data = new Float32Array(size * dim);
    const chunk = new Float32Array(CHUNK_ROWS * dim);
    const bytes = new Uint8Array(chunk.buffer);
    const fd = openSync(path, "r");
    try {
      for (let d0 = 0; d0 < size; d0 += CHUNK_ROWS) {
        const rows = Math.min(CHUNK_ROWS, size - d0);
        const want = rows * dim * 4;
        let got = 0;
        while (got < want) {
          const n = readSync(fd, bytes, got, want - got, d0 * dim * 4 + got);
          if (n === 0) throw new Error(`${path}: expected ${size} x ${dim} floats, the file is shorter`);
          got += n;
        }
        for (let i = 0; i < rows; i++) data.set(chunk.subarray(i * dim, (i + 1) * dim), row[d0 + i] * dim);
      }
    } finally {
      closeSync(fd);
    }
    this.data = data;
  }

  private base(docno: number): number {
    return (this.row ? this.row[docno] : docno) * this.dim;
  }

  vector(docno: number): Float32Array {
    const b = this.base(docno);
    return this.data.subarray(b, b + this.dim);
  }

  /** Dot product of a query with one doc (cosine when both are L2-normalised). */
  score(query: Float32Array, docno: number): number {
    const base = this.base(docno);
    return dotRows(query, 0, this.data, base, this.dim);
  }

  /** Top k by dot product, best first: through the IVF lists when the set has them, else exact. */
  search(query: Float32Array, k: number, probe?: number): Hit[] {
    return this.ivf ? this.searchIvf(query, k, probe ?? this.ivf.probe) : this.exhaustive(query, k);
  }

  /** Exact top k by dot product, best first. */
  exhaustive(query: Float32Array, k: number): Hit[] {
    const { dim, data, scores, ids, ivf } = this;
    if (ivf) {
      // Same kernel as the IVF scan, so probing every list gives exactly this answer.
      for (let r = 0; r < this.size; r++) {
        const d = ivf.docs[r];
        scores[d] = dotRows(query, 0, data, r * dim, dim);
        ids[r] = d;
      }
      return topHits(ids, this.size, scores, k);
    }
    for (let d = 0; d < this.size; d++) {
      scores[d] = dotRows(query, 0, data, d * dim, dim);
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
      for (let r = ivf.start[l]; r < ivf.start[l + 1]; r++) {
        const d = ivf.docs[r];
        scores[d] = dotRows(query, 0, data, r * dim, dim);
        ids[m++] = d;
      }
    }
    return topHits(ids, m, scores, k);
  }
}
