/**
 * Dense vectors of one encoder, stored as a flat Float32 file (n x dim, docno order). Small indexes are searched
 * exhaustively (n x dim multiply-adds: about 2.6 M at 5k abstracts, a few ms). Large ones carry an IVF index
 * (src/index/ivf.ts, built at ingest) and scan only the lists nearest the query: at 400k x 512 exhaustive search
 * costs about half a second per claim (see BENCHMARKS.md, retrieval-scale). With IVF the vectors are held in list
 * order, so each probed list is one sequential scan (in docno order they were scattered over 800 MB, and the
 * scan ran at less than half the speed of an exhaustive one). At that size the scan is bound by memory traffic, not
 * arithmetic, so IVF sets also keep int8 codes of their rows (a quarter of the bytes): the probed lists are scanned
 * on the codes and the best 2k candidates rescored in float32. Exhaustive search and score() stay exact.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { type Hit, topHits } from "./bm25.ts";
import { dotRows, type Ivf, probeLists } from "./ivf.ts";
import { codeWidth, quantizeQuery, quantizeRows, type SimdDots, simdDots } from "./simd-dots.ts";

/** Rows read at a time when loading vectors into list order. */
const CHUNK_ROWS = 4096;
/** IVF search: candidates kept from the int8 scan per hit wanted, then rescored in float32. */
const RESCORE = 2;

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
  /** The SIMD kernel, with `data`, the query and the scores by row in its memory; null where unavailable. */
  private readonly simd: {
    kernel: SimdDots;
    query: Float32Array;
    queryAt: number;
    out: Float32Array;
    outAt: number;
    /** IVF sets: int8 codes of the rows and the int16 query, scanned first (a quarter of the bytes). */
    codes?: { at: number; width: number; scalesAt: number; query: Int16Array; queryAt: number };
  } | null;

  constructor(path: string, dim: number, size: number, ivf?: Ivf) {
    this.dim = dim;
    this.size = size;
    this.scores = new Float32Array(size);
    this.ids = new Uint32Array(size);
    if (ivf && (ivf.n !== size || ivf.dim !== dim))
      throw new Error(`${path}: the IVF index covers ${ivf.n} x ${ivf.dim}, the vectors ${size} x ${dim}`);
    const queryAt = size * dim * 4;
    const outAt = queryAt + dim * 4;
    const width = codeWidth(dim);
    const codesAt = outAt + size * 4;
    const scalesAt = codesAt + size * width;
    const query16At = scalesAt + size * 4;
    const kernel = simdDots(ivf ? query16At + width * 2 : codesAt, dim);
    this.simd = kernel && {
      kernel,
      query: new Float32Array(kernel.memory.buffer, queryAt, dim),
      queryAt,
      out: new Float32Array(kernel.memory.buffer, outAt, size),
      outAt,
      codes: ivf && {
        at: codesAt,
        width,
        scalesAt,
        query: new Int16Array(kernel.memory.buffer, query16At, width),
        queryAt: query16At,
      },
    };
    const data = kernel
      ? new Float32Array(kernel.memory.buffer, 0, size * dim)
      : new Float32Array(size * dim);
    this.data = data;
    const fd = openSync(path, "r");
    try {
      if (fstatSync(fd).size !== size * dim * 4)
        throw new Error(`${path}: expected ${size} x ${dim} floats, found ${fstatSync(fd).size} bytes`);
      if (!ivf) {
        readFully(fd, new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 0, path);
        return;
      }
      this.ivf = ivf;
      const row = new Uint32Array(size);
      for (let r = 0; r < size; r++) row[ivf.docs[r]] = r;
      this.row = row;
      // Read in chunks and place each vector at its row: no second full copy in memory.
      const chunk = new Float32Array(CHUNK_ROWS * dim);
      for (let d0 = 0; d0 < size; d0 += CHUNK_ROWS) {
        const rows = Math.min(CHUNK_ROWS, size - d0);
        readFully(fd, new Uint8Array(chunk.buffer, 0, rows * dim * 4), d0 * dim * 4, path);
        for (let i = 0; i < rows; i++) data.set(chunk.subarray(i * dim, (i + 1) * dim), row[d0 + i] * dim);
      }
    } finally {
      closeSync(fd);
    }
    const codes = this.simd?.codes;
    if (kernel && codes) {
      const buf = kernel.memory.buffer;
      quantizeRows(
        data,
        size,
        dim,
        new Int8Array(buf, codes.at, size * width),
        new Float32Array(buf, scalesAt, size),
      );
    }
  }

  private base(docno: number): number {
    return (this.row ? this.row[docno] : docno) * this.dim;
  }

  vector(docno: number): Float32Array {
    const b = this.base(docno);
    return this.data.subarray(b, b + this.dim);
  }

  /** Dot product of a query with one doc (cosine when both are L2-normalised), by the same kernel as search. */
  score(query: Float32Array, docno: number): number {
    const base = this.base(docno);
    const { simd } = this;
    if (!simd) return dotRows(query, 0, this.data, base, this.dim);
    simd.query.set(query);
    simd.kernel.dots(simd.queryAt, base * 4, 1, this.dim, simd.outAt);
    return simd.out[0];
  }

  /** Top k by dot product, best first: through the IVF lists when the set has them, else exact. */
  search(query: Float32Array, k: number, probe?: number): Hit[] {
    return this.ivf ? this.searchIvf(query, k, probe ?? this.ivf.probe) : this.exhaustive(query, k);
  }

  /** Scores of rows [from, to) into `scores` by docno, and their docnos into ids[m...]; returns the new m. */
  private scoreRows(query: Float32Array, from: number, to: number, m: number, int8Factor?: number): number {
    const { dim, data, scores, ids, simd } = this;
    const docs = this.ivf?.docs;
    const codes = int8Factor === undefined ? undefined : simd?.codes;
    if (simd && codes)
      simd.kernel.dotsI8(
        codes.queryAt,
        codes.at + from * codes.width,
        codes.scalesAt + from * 4,
        to - from,
        codes.width,
        simd.outAt + from * 4,
      );
    else if (simd) simd.kernel.dots(simd.queryAt, from * dim * 4, to - from, dim, simd.outAt + from * 4);
    const factor = int8Factor ?? 1;
    for (let r = from; r < to; r++) {
      const d = docs ? docs[r] : r;
      scores[d] = simd ? simd.out[r] * factor : dotRows(query, 0, data, r * dim, dim);
      ids[m++] = d;
    }
    return m;
  }

  /** Exact top k by dot product, best first (probing every IVF list gives exactly this answer). */
  exhaustive(query: Float32Array, k: number): Hit[] {
    this.simd?.query.set(query);
    return topHits(this.ids, this.scoreRows(query, 0, this.size, 0), this.scores, k);
  }

  /**
   * Top k among the docs of the `probe` lists whose centroids are nearest the query. The scan is bound by memory
   * traffic, so with the SIMD kernel it runs on the int8 codes and the best RESCORE x k are rescored exactly.
   */
  private searchIvf(query: Float32Array, k: number, probe: number): Hit[] {
    const ivf = this.ivf as Ivf;
    const { simd } = this;
    const codes = simd?.codes;
    const factor = codes && quantizeQuery(query, codes.query);
    let m = 0;
    for (const l of probeLists(ivf, query, probe))
      m = this.scoreRows(query, ivf.start[l], ivf.start[l + 1], m, factor);
    if (!simd || !codes) return topHits(this.ids, m, this.scores, k);
    const rough = topHits(this.ids, m, this.scores, RESCORE * k);
    simd.query.set(query);
    const exact = rough.map((h) => ({ docno: h.docno, score: this.exactScore(h.docno) }));
    return exact.sort((a, b) => b.score - a.score || a.docno - b.docno).slice(0, k);
  }

  /** score() for the query already in the kernel's memory. */
  private exactScore(docno: number): number {
    const simd = this.simd as NonNullable<VectorSet["simd"]>;
    simd.kernel.dots(simd.queryAt, this.base(docno) * 4, 1, this.dim, simd.outAt);
    return simd.out[0];
  }
}

function readFully(fd: number, into: Uint8Array, position: number, path: string): void {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, position + got);
    if (n === 0) throw new Error(`${path}: the file is shorter than its manifest says`);
    got += n;
  }
}
