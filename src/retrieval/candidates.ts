/**
 * Stage 1: candidates from BM25 (top ~1000) and each dense vector set (top ~200), united, with every raw signal
 * computed for every candidate (a doc found only by one side still gets the other side's score).
 */
import type { FieldScores, QueryTerm } from "../index/bm25.ts";
import type { OpenIndex } from "../index/open.ts";

export interface Candidate {
  docno: number;
  /** Whole-document BM25 (0 when no query term matches). */
  bm25: number;
  title: number;
  abstract: number;
  /** idf-weighted share of query terms found in the doc. */
  coverage: number;
  /** 0-based rank in the BM25 list, or the list depth when absent. */
  bm25Rank: number;
  /** Cosine per vector set. */
  dense: Record<string, number>;
  /** 0-based rank per vector set, or the list depth when absent. */
  denseRank: Record<string, number>;
}

export interface CandidateDepth {
  bm25: number;
  dense: number;
}

export const DEFAULT_DEPTH: CandidateDepth = { bm25: 1000, dense: 200 };

/**
 * Stage 1 of one claim built in steps, so each vector set can join when its query vector is ready (USE-lite may
 * embed the claim in a worker thread while this one runs BM25 and the other sets): BM25 at construction, add()
 * per vector set, scoreKnown() to score the docs found so far while waiting, finish() for the candidates. The
 * candidates and every score are the same whatever the order of the steps (the order is that of gatherCandidates:
 * BM25 hits, then each set's hits in `names` order).
 */
export class CandidateGather {
  private readonly index: OpenIndex;
  private readonly query: QueryTerm[];
  private readonly names: string[];
  private readonly depth: CandidateDepth;
  private readonly bm25Hits: number[];
  private readonly dense = new Map<string, { vector: Float32Array; hits: number[] }>();
  private readonly fields = new Map<number, FieldScores>();
  /** Cosines per set for the docs scored so far. */
  private readonly cosines = new Map<string, Map<number, number>>();

  constructor(index: OpenIndex, query: QueryTerm[], names: string[], depth: CandidateDepth = DEFAULT_DEPTH) {
    this.index = index;
    this.query = query;
    this.names = names;
    this.depth = depth;
    this.bm25Hits = index.bm25.search(query, depth.bm25).map((h) => h.docno);
  }

  /** Searches one vector set with the claim's vector. */
  add(name: string, vector: Float32Array): void {
    if (!this.names.includes(name) || this.dense.has(name))
      throw new Error(`vector set ${name}: not expected`);
    const hits = this.index.vectors[name].search(vector, this.depth.dense).map((h) => h.docno);
    this.dense.set(name, { vector, hits });
  }

  /** Field scores and cosines (of the sets added) of every doc found so far that lacks them. */
  scoreKnown(): void {
    const docs = [...this.bm25Hits];
    for (const { hits } of this.dense.values()) docs.push(...hits);
    const fresh = [...new Set(docs)].filter((d) => !this.fields.has(d));
    this.index.bm25.fieldScores(this.query, fresh).forEach((f, i) => {
      this.fields.set(fresh[i], f);
    });
    for (const [name, { vector }] of this.dense) {
      let cos = this.cosines.get(name);
      if (!cos) {
        cos = new Map();
        this.cosines.set(name, cos);
      }
      const set = this.index.vectors[name];
      for (const d of this.fields.keys()) if (!cos.has(d)) cos.set(d, set.score(vector, d));
    }
  }

  /** The candidates, once every vector set is added. */
  finish(): Candidate[] {
    const missing = this.names.filter((n) => !this.dense.has(n));
    if (missing.length) throw new Error(`vector sets not added: ${missing.join(", ")}`);
    this.scoreKnown();
    const { depth, names } = this;
    const byDoc = new Map<number, Candidate>();
    const get = (docno: number): Candidate => {
      let c = byDoc.get(docno);
      if (!c) {
        const f = this.fields.get(docno) as FieldScores;
        c = {
          docno,
          bm25: f.all,
          title: f.title,
          abstract: f.abstract,
          coverage: f.coverage,
          bm25Rank: depth.bm25,
          dense: Object.fromEntries(names.map((n) => [n, this.cosines.get(n)?.get(docno) as number])),
          denseRank: Object.fromEntries(names.map((n) => [n, depth.dense])),
        };
        byDoc.set(docno, c);
      }
      return c;
    };
    this.bm25Hits.forEach((d, rank) => {
      get(d).bm25Rank = rank;
    });
    for (const name of names) {
      (this.dense.get(name)?.hits ?? []).forEach((d, rank) => {
        get(d).denseRank[name] = rank;
      });
    }
    return [...byDoc.values()];
  }
}

/** Stage 1 of one claim with every query vector at hand. */
export function gatherCandidates(
  index: OpenIndex,
  query: QueryTerm[],
  queryVectors: Record<string, Float32Array>,
  depth: CandidateDepth = DEFAULT_DEPTH,
): Candidate[] {
  const g = new CandidateGather(index, query, Object.keys(queryVectors), depth);
  for (const [name, v] of Object.entries(queryVectors)) g.add(name, v);
  return g.finish();
}
