/**
 * Own BM25 over title and abstract, persisted as compact binary files. One posting list per term holds both
 * field frequencies, so a single pass yields per-field scores (for the re-ranker) and the whole-document score
 * (for candidates). Terms come from the project tokenizer; stopwords are not indexed (their lists are long and
 * their idf is near zero).
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { STOPWORDS, tokenize } from "../text/tokenize.ts";
import { FILES } from "./schema.ts";

export const K1 = 1.2;
export const B = 0.75;

/** Index terms of a text: tokenizer output without stopwords. */
export function indexTerms(text: string): string[] {
  return tokenize(text).filter((t) => !STOPWORDS.has(t));
}

/** Growable Uint32 buffer (postings are built in docno order, then sorted by term with one counting sort). */
class U32 {
  data = new Uint32Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/** Accumulates documents in docno order and writes the BM25 files. */
export class Bm25Builder {
  private readonly vocab = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly tripleTerm = new U32();
  private readonly tripleDoc = new U32();
  private readonly tripleTf = new U32();
  private readonly titleLen = new U32();
  private readonly absLen = new U32();

  get docs(): number {
    return this.titleLen.length;
  }

  add(title: string, abstract: string): void {
    const docno = this.docs;
    const counts = new Map<number, number>();
    const t = indexTerms(title);
    const a = indexTerms(abstract);
    for (const term of t) this.count(counts, term, 1 << 16);
    for (const term of a) this.count(counts, term, 1);
    for (const [id, packed] of counts) {
      this.tripleTerm.push(id);
      this.tripleDoc.push(docno);
      // Cap each field's tf at 65535 so the two fit one Uint32.
      this.tripleTf.push((Math.min(packed >>> 16, 0xffff) << 16) | Math.min(packed & 0xffff, 0xffff));
    }
    this.titleLen.push(t.length);
    this.absLen.push(a.length);
  }

  private count(counts: Map<number, number>, term: string, inc: number): void {
    let id = this.vocab.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.vocab.set(term, id);
      this.terms.push(term);
    }
    const prev = counts.get(id) ?? 0;
    // Saturate each 16-bit half instead of overflowing into the other.
    if (inc === 1 && (prev & 0xffff) === 0xffff) return;
    if (inc !== 1 && prev >>> 16 === 0xffff) return;
    counts.set(id, prev + inc);
  }

  async write(dir: string): Promise<void> {
    const nTerms = this.terms.length;
    const n = this.tripleTerm.length;
    const start = new Uint32Array(nTerms + 1);
    for (let i = 0; i < n; i++) start[this.tripleTerm.data[i] + 1]++;
    for (let t = 0; t < nTerms; t++) start[t + 1] += start[t];
    const fill = start.slice(0, nTerms);
    const docs = new Uint32Array(n);
    const tfs = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const pos = fill[this.tripleTerm.data[i]]++;
      docs[pos] = this.tripleDoc.data[i];
      tfs[pos] = this.tripleTf.data[i];
    }
    const header = new Uint32Array([nTerms, n]);
    await writeFile(join(dir, FILES.terms), this.terms.join("\n"));
    await writeFile(join(dir, FILES.postings), concat([header, start, docs, tfs]));
    const titleLen = new Uint32Array(this.titleLen.data.buffer, 0, this.docs);
    const absLen = new Uint32Array(this.absLen.data.buffer, 0, this.docs);
    await writeFile(join(dir, FILES.lengths), concat([new Uint32Array([this.docs]), titleLen, absLen]));
  }
}

function concat(parts: Uint32Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

function u32s(buf: Buffer, offset: number, length: number): Uint32Array {
  // Copy so the view is 4-byte aligned whatever the Buffer pool did.
  const out = new Uint32Array(length);
  out.set(
    new Uint32Array(buf.buffer.slice(buf.byteOffset + offset * 4, buf.byteOffset + (offset + length) * 4)),
  );
  return out;
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
  term: string;
  id: number;
  qtf: number;
  idf: number;
}

export class Bm25Index {
  readonly size: number;
  private readonly vocab: Map<string, number>;
  private readonly start: Uint32Array;
  private readonly docs: Uint32Array;
  private readonly tfs: Uint32Array;
  private readonly titleLen: Uint32Array;
  private readonly absLen: Uint32Array;
  private readonly avgTitle: number;
  private readonly avgAbs: number;
  private readonly avgAll: number;
  /** Reused accumulator (one query at a time). */
  private readonly acc: Float32Array;

  constructor(dir: string) {
    const terms = readFileSync(join(dir, FILES.terms), "utf8");
    const list = terms === "" ? [] : terms.split("\n");
    this.vocab = new Map(list.map((t, i) => [t, i]));
    const p = readFileSync(join(dir, FILES.postings));
    const [nTerms, n] = u32s(p, 0, 2);
    this.start = u32s(p, 2, nTerms + 1);
    this.docs = u32s(p, 3 + nTerms, n);
    this.tfs = u32s(p, 3 + nTerms + n, n);
    const l = readFileSync(join(dir, FILES.lengths));
    this.size = u32s(l, 0, 1)[0];
    this.titleLen = u32s(l, 1, this.size);
    this.absLen = u32s(l, 1 + this.size, this.size);
    let st = 0;
    let sa = 0;
    for (let i = 0; i < this.size; i++) {
      st += this.titleLen[i];
      sa += this.absLen[i];
    }
    this.avgTitle = Math.max(st / Math.max(this.size, 1), 1);
    this.avgAbs = Math.max(sa / Math.max(this.size, 1), 1);
    this.avgAll = this.avgTitle + this.avgAbs;
    this.acc = new Float32Array(this.size);
  }

  /** Document frequency of a term (0 when unknown). */
  df(term: string): number {
    const id = this.vocab.get(term);
    return id === undefined ? 0 : this.start[id + 1] - this.start[id];
  }

  /** Robertson idf, floored at a small positive value so very common terms never score negative. */
  idf(term: string): number {
    const df = this.df(term);
    return Math.max(Math.log(1 + (this.size - df + 0.5) / (df + 0.5)), 1e-3);
  }

  /** Distinct query terms with their counts and idf; unknown terms are dropped. */
  queryTerms(text: string): QueryTerm[] {
    const counts = new Map<string, number>();
    for (const t of indexTerms(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const out: QueryTerm[] = [];
    for (const [term, qtf] of counts) {
      const id = this.vocab.get(term);
      if (id !== undefined) out.push({ term, id, qtf, idf: this.idf(term) });
    }
    return out;
  }

  /** Top k docnos by whole-document BM25, best first (ties by docno). */
  search(query: QueryTerm[], k: number): { docno: number; score: number }[] {
    const acc = this.acc;
    const touched: number[] = [];
    for (const q of query) {
      const w = q.idf * q.qtf;
      for (let i = this.start[q.id]; i < this.start[q.id + 1]; i++) {
        const d = this.docs[i];
        const tf = (this.tfs[i] >>> 16) + (this.tfs[i] & 0xffff);
        const len = this.titleLen[d] + this.absLen[d];
        if (acc[d] === 0) touched.push(d);
        acc[d] += (w * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / this.avgAll));
      }
    }
    const hits = topK(touched, acc, k);
    for (const d of touched) acc[d] = 0;
    return hits;
  }

  /** Per-field scores and coverage of the given docs (binary search in each posting list). */
  fieldScores(query: QueryTerm[], docnos: number[]): FieldScores[] {
    const out = docnos.map(() => ({ title: 0, abstract: 0, all: 0, coverage: 0 }));
    const totalIdf = query.reduce((s, q) => s + q.idf, 0) || 1;
    docnos.forEach((d, j) => {
      const o = out[j];
      const lt = this.titleLen[d];
      const la = this.absLen[d];
      for (const q of query) {
        const packed = this.lookup(q.id, d);
        if (packed === 0) continue;
        const tt = packed >>> 16;
        const ta = packed & 0xffff;
        const w = q.idf * q.qtf;
        if (tt) o.title += (w * tt * (K1 + 1)) / (tt + K1 * (1 - B + (B * lt) / this.avgTitle));
        if (ta) o.abstract += (w * ta * (K1 + 1)) / (ta + K1 * (1 - B + (B * la) / this.avgAbs));
        const tf = tt + ta;
        o.all += (w * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * (lt + la)) / this.avgAll));
        o.coverage += q.idf;
      }
      o.coverage /= totalIdf;
    });
    return out;
  }

  private lookup(term: number, docno: number): number {
    let lo = this.start[term];
    let hi = this.start[term + 1] - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const d = this.docs[mid];
      if (d === docno) return this.tfs[mid];
      if (d < docno) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  }
}

/** The k best (score desc, docno asc) of the touched docs. */
export function topK(
  docnos: ArrayLike<number>,
  score: ArrayLike<number>,
  k: number,
): { docno: number; score: number }[] {
  const all: { docno: number; score: number }[] = [];
  for (let i = 0; i < docnos.length; i++) all.push({ docno: docnos[i], score: score[docnos[i]] });
  if (all.length > 4 * k) {
    // Find the k-th best score with a numeric typed-array sort, then sort only the hits above it.
    const scores = Float32Array.from(all, (h) => h.score).sort();
    const cut = scores[scores.length - k];
    return all
      .filter((h) => h.score >= cut)
      .sort((a, b) => b.score - a.score || a.docno - b.docno)
      .slice(0, k);
  }
  return all.sort((a, b) => b.score - a.score || a.docno - b.docno).slice(0, k);
}
