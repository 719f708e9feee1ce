/**
 * Own BM25 over title and abstract, persisted as compact binary files. One posting list per term holds both
 * field frequencies, so a single pass yields per-field scores (for the re-ranker) and the whole-document score
 * (for candidates). Terms are the project tokenizer's tokens through the BM25 analysis (src/text/stem.ts: a stop
 * list and Porter2 stemming). The whole-document score is BM25F-style: the title's term counts and length weigh
 * `titleWeight` times the abstract's, with k1 and b chosen per corpus kind (recorded in the index manifest).
 * Each term also stores an upper bound of its score, so a query can skip most of the long lists of common terms
 * (MaxScore) and still return the exact top k.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Analyzer, analyze, BM25_ANALYZER, termOf } from "../text/stem.ts";
import { tokenize } from "../text/tokenize.ts";
import { writeParts } from "./binary.ts";
import { FILES } from "./schema.ts";

/** The scoring parameters of the whole-document BM25 (the per-field scores use k1 and b alone). */
export interface Bm25Params {
  k1: number;
  b: number;
  /** A title token counts this many abstract tokens (term frequency and length alike). */
  titleWeight: number;
}

/** The textbook defaults, and what schema 2 indexes used. */
export const STOCK_PARAMS: Readonly<Bm25Params> = { k1: 1.2, b: 0.75, titleWeight: 1 };
/** Field term frequencies are capped at 255 so both fit one Uint16 (BM25 saturates long before that). */
const TF_CAP = 0xff;

/** Index terms of a text: tokenizer output through the BM25 analysis (stop words out, Porter2 stems). */
export function indexTerms(text: string, analyzer: Analyzer = BM25_ANALYZER): string[] {
  return analyze(text, analyzer);
}

/** Growable typed buffer (postings are built in docno order, then sorted by term with one counting sort). */
class Grow<T extends Uint32Array | Uint16Array> {
  length = 0;
  constructor(
    public data: T,
    private readonly make: (n: number) => T,
  ) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      // x1.5 rather than x2: the postings of 400k abstracts are tens of millions of entries.
      const next = this.make(Math.ceil(this.data.length * 1.5));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}
const u32 = (n: number) => new Grow(new Uint32Array(n), (m) => new Uint32Array(m));
const u16 = (n: number) => new Grow(new Uint16Array(n), (m) => new Uint16Array(m));
/** Accumulates documents in docno order and writes the BM25 files. */
export class Bm25Builder {
  /** Token -> term id (stop words map to -1), so each token costs one hash lookup; stems share an id. */
  private readonly tokenIds = new Map<string, number>();
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly postTerm = u32(1 << 16);
  private readonly postDoc = u32(1 << 16);
  private readonly postTf = u16(1 << 16);
  private readonly titleLen = u32(1 << 12);
  private readonly absLen = u32(1 << 12);
  // Per-term scratch for the doc being added (a Map per doc was the top cost of ingest).
  private seenIn = new Int32Array(1 << 16).fill(-1);
  private tfTitle = new Uint16Array(1 << 16);
  private tfAbs = new Uint16Array(1 << 16);
  private readonly touched: number[] = [];

  constructor(
    readonly analyzer: Analyzer = BM25_ANALYZER,
    /** The parameters the stored score bounds are computed for (a reader with others recomputes them). */
    public params: Bm25Params = STOCK_PARAMS,
  ) {}

  get docs(): number {
    return this.titleLen.length;
  }

  add(title: string, abstract: string): void {
    const docno = this.docs;
    this.touched.length = 0;
    this.titleLen.push(this.countField(title, docno, this.tfTitle, this.tfAbs));
    this.absLen.push(this.countField(abstract, docno, this.tfAbs, this.tfTitle));
    for (const id of this.touched) {
      this.postTerm.push(id);
      this.postDoc.push(docno);
      this.postTf.push((Math.min(this.tfTitle[id], TF_CAP) << 8) | Math.min(this.tfAbs[id], TF_CAP));
    }
  }

  /** The term id of a token (-1 for a stop word), adding its term to the vocabulary when new. */
  private idOf(token: string): number {
    let id = this.tokenIds.get(token);
    if (id !== undefined) return id;
    const term = termOf(token, this.analyzer);
    if (term === undefined) id = -1;
    else {
      id = this.termIds.get(term);
      if (id === undefined) {
        id = this.terms.length;
        this.termIds.set(term, id);
        this.terms.push(term);
        if (id === this.seenIn.length) this.growScratch();
      }
    }
    this.tokenIds.set(token, id);
    return id;
  }

  /** Counts a field's index terms into `tf` (zeroing `other` for terms new to this doc); returns its length. */
  private countField(text: string, docno: number, tf: Uint16Array, other: Uint16Array): number {
    let n = 0;
    for (const token of tokenize(text)) {
      const id = this.idOf(token);
      if (id < 0) continue;
      n++;
      if (this.seenIn[id] !== docno) {
        this.seenIn[id] = docno;
        tf[id] = 0;
        other[id] = 0;
        this.touched.push(id);
      }
      if (tf[id] < 0xffff) tf[id]++;
    }
    return n;
  }

  private growScratch(): void {
    const n = this.seenIn.length * 2;
    const seen = new Int32Array(n).fill(-1);
    seen.set(this.seenIn);
    this.seenIn = seen;
    const t = new Uint16Array(n);
    t.set(this.tfTitle);
    this.tfTitle = t;
    const a = new Uint16Array(n);
    a.set(this.tfAbs);
    this.tfAbs = a;
  }

  async write(dir: string): Promise<void> {
    const nTerms = this.terms.length;
    const n = this.postTerm.length;
    const termOf = this.postTerm.data;
    const start = new Uint32Array(nTerms + 1);
    for (let i = 0; i < n; i++) start[termOf[i] + 1]++;
    for (let t = 0; t < nTerms; t++) start[t + 1] += start[t];
    const fill = start.slice(0, nTerms);
    const docs = new Uint32Array(n);
    const tfs = new Uint16Array(n + (n & 1)); // even length keeps the next part 4-byte aligned
    const srcDoc = this.postDoc.data;
    const srcTf = this.postTf.data;
    for (let i = 0; i < n; i++) {
      const pos = fill[termOf[i]]++;
      docs[pos] = srcDoc[i];
      tfs[pos] = srcTf[i];
    }
    const titleLen = this.titleLen.view();
    const absLen = this.absLen.view();
    const { k1, b, titleWeight } = this.params;
    const norm = lengthNorms(titleLen, absLen, this.params);
    const bound = scoreBounds(start, docs, tfs, norm, titleWeight);
    await writeFile(join(dir, FILES.terms), this.terms.join("\n"));
    writeParts(join(dir, FILES.postings), [
      new Uint32Array([nTerms, n]),
      new Float32Array([k1, b, titleWeight, 0]),
      start,
      docs,
      tfs,
      bound,
    ]);
    writeParts(join(dir, FILES.lengths), [new Uint32Array([this.docs]), titleLen, absLen]);
  }
}

/** Per-field mean lengths, each floored at 1. */
function averages(titleLen: Uint32Array, absLen: Uint32Array): { title: number; abs: number } {
  const n = titleLen.length;
  let st = 0;
  let sa = 0;
  for (let i = 0; i < n; i++) {
    st += titleLen[i];
    sa += absLen[i];
  }
  return { title: Math.max(st / Math.max(n, 1), 1), abs: Math.max(sa / Math.max(n, 1), 1) };
}

/** k1 * (1 - b + b * len / avg) per doc, len = titleWeight * title + abstract (the candidate score's norm). */
function lengthNorms(titleLen: Uint32Array, absLen: Uint32Array, p: Bm25Params): Float64Array {
  const avg = averages(titleLen, absLen);
  const avgAll = p.titleWeight * avg.title + avg.abs;
  const out = new Float64Array(titleLen.length);
  for (let i = 0; i < out.length; i++)
    out[i] = p.k1 * (1 - p.b + (p.b * (p.titleWeight * titleLen[i] + absLen[i])) / avgAll);
  return out;
}

/** Upper bound per term of tf / (tf + norm): times idf * qtf * (k1 + 1) it bounds any doc's score. */
function scoreBounds(
  start: Uint32Array,
  docs: Uint32Array,
  tfs: Uint16Array,
  norm: Float64Array,
  titleWeight: number,
): Float32Array {
  const nTerms = start.length - 1;
  const bound = new Float32Array(nTerms);
  for (let t = 0; t < nTerms; t++) {
    let best = 0;
    for (let i = start[t]; i < start[t + 1]; i++) {
      const tf = titleWeight * (tfs[i] >>> 8) + (tfs[i] & 0xff);
      const c = tf / (tf + norm[docs[i]]);
      if (c > best) best = c;
    }
    bound[t] = best;
  }
  return bound;
}

/** A typed view of `count` elements at byte `offset` of a file buffer; copied only when misaligned. */
function view<T>(
  buf: Buffer,
  offset: number,
  count: number,
  Ctor: { new (b: ArrayBufferLike, o: number, n: number): T; new (n: number): T; BYTES_PER_ELEMENT: number },
): T {
  const at = buf.byteOffset + offset;
  if (at % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(buf.buffer, at, count);
  const copy = new Uint8Array(count * Ctor.BYTES_PER_ELEMENT);
  copy.set(buf.subarray(offset, offset + copy.length));
  return new Ctor(copy.buffer, 0, count);
}

/** Per-field BM25 scores of one document for one query. */
export interface FieldScores {
  title: number;
  abstract: number;
  /** Title and abstract as one field (the candidate score). */
  all: number;
  /** Query terms (distinct) found anywhere in the doc, weighted by idf, over the query's total idf. */
  coverage: number;
}

export interface QueryTerm {
  /** The index term (a stem under the default analysis). */
  term: string;
  id: number;
  /** Weight of the term in the query: its count, or an expansion weight (src/index/rm3.ts). */
  qtf: number;
  idf: number;
}

export interface Hit {
  docno: number;
  score: number;
}

/** How an index analyses text and scores it (recorded in the manifest; see src/index/schema.ts). */
export interface Bm25Setup {
  analyzer: Analyzer;
  params: Bm25Params;
}

export class Bm25Index {
  readonly size: number;
  readonly analyzer: Analyzer;
  private readonly vocab: Map<string, number>;
  private readonly termList: string[];
  private readonly start: Uint32Array;
  private readonly docs: Uint32Array;
  private readonly tfs: Uint16Array;
  private bound: Float32Array;
  private readonly titleLen: Uint32Array;
  private readonly absLen: Uint32Array;
  private readonly avgTitle: number;
  private readonly avgAbs: number;
  private norm: Float64Array;
  private p: Bm25Params;
  /** Reused per query (one query at a time): score accumulator and the docs it touched. */
  private readonly acc: Float64Array;
  private readonly touched: Int32Array;
  /** Postings read by the last search (for tests and benchmarks of the pruning). */
  lastPostings = 0;

  /** Without `setup`: the default analysis and the parameters the files were written with. */
  constructor(dir: string, setup?: Partial<Bm25Setup>) {
    const terms = readFileSync(join(dir, FILES.terms), "utf8");
    this.termList = terms === "" ? [] : terms.split("\n");
    this.vocab = new Map();
    for (let i = 0; i < this.termList.length; i++) this.vocab.set(this.termList[i], i);
    const p = readFileSync(join(dir, FILES.postings));
    const [nTerms, n] = view(p, 0, 2, Uint32Array);
    const [k1, b, titleWeight] = view(p, 8, 4, Float32Array);
    let off = 24;
    this.start = view(p, off, nTerms + 1, Uint32Array);
    off += (nTerms + 1) * 4;
    this.docs = view(p, off, n, Uint32Array);
    off += n * 4;
    this.tfs = view(p, off, n, Uint16Array);
    off += (n + (n & 1)) * 2;
    this.bound = view(p, off, nTerms, Float32Array);
    const l = readFileSync(join(dir, FILES.lengths));
    this.size = view(l, 0, 1, Uint32Array)[0];
    this.titleLen = view(l, 4, this.size, Uint32Array);
    this.absLen = view(l, 4 + this.size * 4, this.size, Uint32Array);
    const avg = averages(this.titleLen, this.absLen);
    this.avgTitle = avg.title;
    this.avgAbs = avg.abs;
    this.analyzer = setup?.analyzer ?? BM25_ANALYZER;
    // Float32 in the file: the stored bounds are valid for exactly these values.
    this.p = { k1, b, titleWeight };
    this.norm = lengthNorms(this.titleLen, this.absLen, this.p);
    if (setup?.params) this.setParams(setup.params);
    this.acc = new Float64Array(this.size);
    this.touched = new Int32Array(this.size);
  }

  get params(): Bm25Params {
    return { ...this.p };
  }

  /** Scores with other parameters from now on (recomputes length norms and score bounds: one pass over postings). */
  setParams(params: Bm25Params): void {
    const same = (a: number, b: number) => Math.fround(a) === Math.fround(b);
    if (
      same(params.k1, this.p.k1) &&
      same(params.b, this.p.b) &&
      same(params.titleWeight, this.p.titleWeight)
    )
      return;
    // Rounded as the file stores them, so an index built with these parameters scores the same to the bit.
    this.p = {
      k1: Math.fround(params.k1),
      b: Math.fround(params.b),
      titleWeight: Math.fround(params.titleWeight),
    };
    this.norm = lengthNorms(this.titleLen, this.absLen, this.p);
    this.bound = scoreBounds(this.start, this.docs, this.tfs, this.norm, this.p.titleWeight);
  }

  /** The index term of one tokenizer token, or undefined for a stop word (features match claims with it). */
  term(token: string): string | undefined {
    return termOf(token, this.analyzer);
  }

  /** Document frequency of an index term (0 when unknown). */
  df(term: string): number {
    const id = this.vocab.get(term);
    return id === undefined ? 0 : this.start[id + 1] - this.start[id];
  }

  /** Robertson idf, floored at a small positive value so very common terms never score negative. */
  idf(term: string): number {
    const df = this.df(term);
    return Math.max(Math.log(1 + (this.size - df + 0.5) / (df + 0.5)), 1e-3);
  }

  /** Query terms from weighted index terms; unknown terms are dropped. */
  weightedTerms(weights: Map<string, number>): QueryTerm[] {
    const out: QueryTerm[] = [];
    for (const [term, qtf] of weights) {
      const id = this.vocab.get(term);
      if (id !== undefined) out.push({ term, id, qtf, idf: this.idf(term) });
    }
    return out;
  }

  /** Distinct query terms with their counts and idf; unknown terms are dropped. */
  queryTerms(text: string): QueryTerm[] {
    const counts = new Map<string, number>();
    for (const t of indexTerms(text, this.analyzer)) counts.set(t, (counts.get(t) ?? 0) + 1);
    return this.weightedTerms(counts);
  }

  /**
   * Top k docnos by whole-document BM25, best first (ties by docno). Exact, with MaxScore pruning: terms go in
   * order of their score bound; once the bounds of the terms left cannot lift an unseen doc to the current k-th
   * score, those terms only update docs already seen (a binary search each, instead of a scan of a long list).
   * `exhaustive` turns the pruning off (same order of additions, so the same scores to the last bit).
   */
  search(query: QueryTerm[], k: number, exhaustive = false): Hit[] {
    const { acc, touched, docs, tfs, norm, start } = this;
    const { k1, titleWeight: wt } = this.p;
    const terms = query
      .map((q) => {
        const w = q.idf * q.qtf * (k1 + 1);
        return { id: q.id, w, bound: w * this.bound[q.id] * (1 + 1e-6) };
      })
      .sort((a, b) => b.bound - a.bound || a.id - b.id);
    const rest = new Float64Array(terms.length + 1);
    for (let i = terms.length - 1; i >= 0; i--) rest[i] = rest[i + 1] + terms[i].bound;
    let nt = 0;
    let read = 0;
    let t = 0;
    for (; t < terms.length; t++) {
      // Prune when even the best possible score of an unseen doc is below the k-th score so far.
      if (!exhaustive && k > 0 && nt >= k && rest[t] < rest[0] - rest[t]) {
        if (rest[t] < kthLargest(acc, touched, nt, k)) break;
      }
      const { id, w } = terms[t];
      const end = start[id + 1];
      read += end - start[id];
      for (let i = start[id]; i < end; i++) {
        const d = docs[i];
        const tf = wt * (tfs[i] >>> 8) + (tfs[i] & 0xff);
        if (tf === 0) continue; // a title-only match at title weight 0
        if (acc[d] === 0) touched[nt++] = d;
        acc[d] += (w * tf) / (tf + norm[d]);
      }
    }
    if (t < terms.length) {
      // Docs seen so far, in docno order, so each remaining list is searched forward only.
      const seen = touched.subarray(0, nt).sort();
      for (; t < terms.length; t++) {
        const { id, w } = terms[t];
        let lo = start[id];
        const end = start[id + 1];
        for (let j = 0; j < nt && lo < end; j++) {
          const d = seen[j];
          lo = gallop(docs, lo, end, d);
          read++;
          if (lo < end && docs[lo] === d) {
            const tf = wt * (tfs[lo] >>> 8) + (tfs[lo] & 0xff);
            acc[d] += (w * tf) / (tf + norm[d]);
          }
        }
      }
    }
    this.lastPostings = read;
    const hits = topHits(touched, nt, acc, k);
    for (let i = 0; i < nt; i++) acc[touched[i]] = 0;
    return hits;
  }

  /**
   * Per-field scores and coverage of the given docs. Each posting list is searched forward once over the docs in
   * docno order (a gallop from the last match, not a binary search from the list's start per doc: stage 1 asks
   * for ~1,000 docs, and at 400k abstracts the searches from the start were most of the cost); the sums per doc
   * then run in query order, as before.
   */
  fieldScores(query: QueryTerm[], docnos: number[]): FieldScores[] {
    const { k1, b, titleWeight: wt } = this.p;
    const n = docnos.length;
    const byDocno = Uint32Array.from(docnos.keys()).sort((x, y) => docnos[x] - docnos[y]);
    // packed[t * n + j]: title and abstract tf of query term t in doc j (0 when absent).
    const packed = new Uint32Array(query.length * n);
    query.forEach((q, t) => {
      let lo = this.start[q.id];
      const end = this.start[q.id + 1];
      for (let i = 0; i < n && lo < end; i++) {
        const j = byDocno[i];
        lo = gallop(this.docs, lo, end, docnos[j]);
        if (lo < end && this.docs[lo] === docnos[j]) packed[t * n + j] = this.tfs[lo];
      }
    });
    const out = docnos.map(() => ({ title: 0, abstract: 0, all: 0, coverage: 0 }));
    const totalIdf = query.reduce((s, q) => s + q.idf, 0) || 1;
    docnos.forEach((d, j) => {
      const o = out[j];
      const lt = this.titleLen[d];
      const la = this.absLen[d];
      query.forEach((q, t) => {
        const p = packed[t * n + j];
        if (p === 0) return;
        const tt = p >>> 8;
        const ta = p & 0xff;
        const w = q.idf * q.qtf;
        if (tt) o.title += (w * tt * (k1 + 1)) / (tt + k1 * (1 - b + (b * lt) / this.avgTitle));
        if (ta) o.abstract += (w * ta * (k1 + 1)) / (ta + k1 * (1 - b + (b * la) / this.avgAbs));
        const tf = wt * tt + ta;
        if (tf > 0) o.all += (w * (k1 + 1) * tf) / (tf + this.norm[d]);
        o.coverage += q.idf;
      });
      o.coverage /= totalIdf;
    });
    return out;
  }
}

/** First index in [lo, end) whose docno is >= d (docs sorted ascending there): exponential then binary search. */
function gallop(docs: Uint32Array, lo: number, end: number, d: number): number {
  if (lo >= end || docs[lo] >= d) return lo;
  let step = 1;
  let hi = lo + 1;
  while (hi < end && docs[hi] < d) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > end) hi = end;
  // Invariant: docs[lo] < d, and docs[hi] >= d or hi === end.
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < d) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The k-th largest of score[ids[0..n)] (-Infinity when n < k), with a size-k min-heap. */
export function kthLargest(score: ArrayLike<number>, ids: ArrayLike<number>, n: number, k: number): number {
  if (k <= 0 || n < k) return Number.NEGATIVE_INFINITY;
  const heap = new Float64Array(k);
  for (let i = 0; i < k; i++) heap[i] = score[ids[i]];
  heap.sort();
  // A sorted array is a valid min-heap.
  for (let i = k; i < n; i++) {
    const s = score[ids[i]];
    if (s <= heap[0]) continue;
    let j = 0;
    for (;;) {
      const l = 2 * j + 1;
      if (l >= k) break;
      const c = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l;
      if (heap[c] >= s) break;
      heap[j] = heap[c];
      j = c;
    }
    heap[j] = s;
  }
  return heap[0];
}

/** The k best of score[ids[0..n)], score desc then docno asc; allocates only for the hits. */
export function topHits(ids: ArrayLike<number>, n: number, score: ArrayLike<number>, k: number): Hit[] {
  if (k <= 0) return [];
  const cut = n > k ? kthLargest(score, ids, n, k) : Number.NEGATIVE_INFINITY;
  const out: Hit[] = [];
  for (let i = 0; i < n; i++) {
    const s = score[ids[i]];
    if (s >= cut) out.push({ docno: ids[i], score: s });
  }
  return out.sort((a, b) => b.score - a.score || a.docno - b.docno).slice(0, k);
}
