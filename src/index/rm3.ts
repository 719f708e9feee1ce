/**
 * RM3 pseudo-relevance feedback for the BM25 first stage: the top documents of a first search give a relevance
 * model P(w|R) = sum over docs of P(w|d) * P(d|q) (P(d|q) from the normalised BM25 scores); its best terms are
 * mixed with the original query, which is then searched again. Tried as a second query (see the benchmark);
 * the retriever uses it only when the index manifest asks for it (it did not pay on our training claims).
 */
import type { Bm25Index, Hit, QueryTerm } from "./bm25.ts";

export interface Rm3Options {
  /** Feedback documents (the top of the first search). */
  docs: number;
  /** Expansion terms kept. */
  terms: number;
  /** Weight of the original query in the mixture (1 = no feedback). */
  originalWeight: number;
}

/**
 * The expanded query. `docTerms(docno)` gives a doc's index terms (title and abstract through the index's
 * analysis). Weights are scaled so the expanded query has the original's total weight.
 */
export function rm3Expand(
  index: Bm25Index,
  query: QueryTerm[],
  hits: Hit[],
  docTerms: (docno: number) => string[],
  o: Rm3Options,
): QueryTerm[] {
  const fb = hits.slice(0, o.docs).filter((h) => h.score > 0);
  if (fb.length === 0 || query.length === 0) return query;
  const total = fb.reduce((s, h) => s + h.score, 0);
  const rel = new Map<string, number>();
  for (const h of fb) {
    const terms = docTerms(h.docno);
    if (terms.length === 0) continue;
    const counts = new Map<string, number>();
    for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
    const pd = h.score / total;
    for (const [t, c] of counts) rel.set(t, (rel.get(t) ?? 0) + pd * (c / terms.length));
  }
  // Terms found in nearly every doc carry no topic: weigh the relevance model by idf, as Anserini's RM3 keeps
  // only terms of some specificity.
  const scored = [...rel]
    .map(([t, p]) => [t, p * index.idf(t)] as const)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const top = scored.slice(0, o.terms);
  const relSum = top.reduce((s, [, p]) => s + p, 0) || 1;
  const qSum = query.reduce((s, q) => s + q.qtf, 0);
  const mixed = new Map<string, number>();
  for (const q of query) mixed.set(q.term, o.originalWeight * (q.qtf / qSum));
  for (const [t, p] of top) mixed.set(t, (mixed.get(t) ?? 0) + (1 - o.originalWeight) * (p / relSum));
  for (const [t, w] of mixed) mixed.set(t, w * qSum);
  return index.weightedTerms(mixed);
}
