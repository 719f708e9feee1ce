/**
 * Stage 1: candidates from BM25 (top ~1000) and each dense vector set (top ~200), united, with every raw signal
 * computed for every candidate (a doc found only by one side still gets the other side's score).
 */
import type { QueryTerm } from "../index/bm25.ts";
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

export function gatherCandidates(
  index: OpenIndex,
  query: QueryTerm[],
  queryVectors: Record<string, Float32Array>,
  depth: CandidateDepth = DEFAULT_DEPTH,
): Candidate[] {
  const byDoc = new Map<number, Candidate>();
  const names = Object.keys(queryVectors);
  const get = (docno: number): Candidate => {
    let c = byDoc.get(docno);
    if (!c) {
      c = {
        docno,
        bm25: 0,
        title: 0,
        abstract: 0,
        coverage: 0,
        bm25Rank: depth.bm25,
        dense: {},
        denseRank: Object.fromEntries(names.map((n) => [n, depth.dense])),
      };
      byDoc.set(docno, c);
    }
    return c;
  };
  index.bm25.search(query, depth.bm25).forEach((h, rank) => {
    get(h.docno).bm25Rank = rank;
  });
  for (const name of names) {
    const set = index.vectors[name];
    set.search(queryVectors[name], depth.dense).forEach((h, rank) => {
      get(h.docno).denseRank[name] = rank;
    });
  }
  const cands = [...byDoc.values()];
  const fields = index.bm25.fieldScores(
    query,
    cands.map((c) => c.docno),
  );
  cands.forEach((c, i) => {
    c.bm25 = fields[i].all;
    c.title = fields[i].title;
    c.abstract = fields[i].abstract;
    c.coverage = fields[i].coverage;
    for (const name of names) c.dense[name] = index.vectors[name].score(queryVectors[name], c.docno);
  });
  return cands;
}
