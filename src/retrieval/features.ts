/**
 * Re-ranking features of a (claim, candidate) pair, grouped in families so each can be ablated. All are
 * query-relative (normalised over the candidate list) so one linear model serves queries of any length.
 */
import type { QueryTerm } from "../index/bm25.ts";
import type { StoredDoc } from "../index/schema.ts";
import { tokenize } from "../text/tokenize.ts";
import type { Candidate } from "./candidates.ts";
import { normalisedSignals } from "./fusion.ts";

export const FAMILIES = ["lexical", "dense", "coverage", "numbers", "prf", "wordvec"] as const;
export type Family = (typeof FAMILIES)[number];

export interface FeatureContext {
  claim: string;
  query: QueryTerm[];
  /** The index term of a tokenizer token (a stem, or undefined for a stop word): how query terms are matched. */
  term: (token: string) => string | undefined;
  /** The candidate list the features are relative to (all of stage 1, in fused order). */
  cands: Candidate[];
  /** Fused stage-1 score of each candidate. */
  fused: number[];
  /** The candidates to featurise, analysed (same order as `rows`; see analyseDoc). */
  docs: AnalysedDoc[];
  /** Dense vector of each featurised candidate per set (for pseudo-relevance feedback). */
  docVectors: Record<string, Float32Array[]>;
  /** Claim vector for sentence-level word-vector matching, when that family is on. */
  claimSif?: Float32Array;
}

/** Names of the features of the given families, for the given vector sets. */
export function featureNames(families: readonly Family[], vectorSets: readonly string[]): string[] {
  const out: string[] = [];
  // Same order as computeFeatures: the order of FAMILIES, whatever the order of `families`.
  for (const f of FAMILIES.filter((x) => families.includes(x))) {
    if (f === "lexical")
      out.push("bm25", "bm25_title", "bm25_abstract", "bm25_rank", "fused", "lexical_confidence");
    if (f === "dense")
      for (const v of vectorSets) out.push(`${v}_cos`, `${v}_norm`, `${v}_rank`, `${v}_x_lexical_confidence`);
    if (f === "coverage")
      out.push("coverage", "sentence_coverage", "proximity", "title_coverage", "log_length");
    if (f === "numbers") out.push("numbers_matched", "numbers_missing");
    if (f === "prf") for (const v of vectorSets) out.push(`${v}_prf`);
    if (f === "wordvec") out.push("sif_best_sentence");
  }
  return out;
}

const PRF_DOCS = 5;

/**
 * What the features read of a doc, computed once per doc (a caller may keep it: the same abstracts come back
 * claim after claim): its sentences' tokens and index terms, its title's terms, and (when the caller adds them)
 * its sentences' unit SIF vectors.
 */
export interface AnalysedDoc {
  tokens: string[][];
  terms: string[][];
  title: string[];
  sif?: Float32Array[];
}

/** Analyses one stored doc (`term` as in FeatureContext), without sentence vectors. */
export function analyseDoc(doc: StoredDoc, term: (token: string) => string | undefined): AnalysedDoc {
  const termsOf = (tokens: string[]) => tokens.map((t) => term(t) ?? "");
  const tokens = doc.sentences.map((s) => tokenize(s));
  return { tokens, terms: tokens.map(termsOf), title: termsOf(tokenize(doc.title ?? "")) };
}

/** Features of the first `rows.length` candidates in `rows` (indices into ctx.cands). */
export function computeFeatures(
  ctx: FeatureContext,
  rows: number[],
  families: readonly Family[],
  vectorSets: readonly string[],
): Float32Array[] {
  const on = new Set(families);
  const norm = normalisedSignals(ctx.cands);
  const max = (f: (c: Candidate) => number) => Math.max(1e-9, ...ctx.cands.map(f));
  const maxTitle = max((c) => c.title);
  const maxAbs = max((c) => c.abstract);
  const maxFused = Math.max(1e-9, ...ctx.fused);
  const totalIdf = ctx.query.reduce((s, q) => s + q.idf, 0) || 1;
  const idfOf = new Map(ctx.query.map((q) => [q.term, q.idf]));
  // How well the claim matches lexically at all: the best coverage among BM25's top 10.
  const lexConf = Math.max(0, ...ctx.cands.filter((c) => c.bm25Rank < 10).map((c) => c.coverage));
  // Surface tokens for numbers; index terms (stems) wherever query terms are matched.
  const claimTokens = tokenize(ctx.claim);
  const claimNumbers = [...new Set(claimTokens.filter((t) => /\d/.test(t)))];
  const termsOf = (tokens: string[]) => tokens.map((t) => ctx.term(t) ?? "");
  const queryOrder = termsOf(claimTokens).filter((t) => idfOf.has(t));
  // Query terms are distinct: their index marks which a sentence holds (a Set per sentence cost more).
  const queryIndex = new Map(ctx.query.map((q, k) => [q.term, k]));
  const seen = new Uint32Array(ctx.query.length);
  let stamp = 0;
  const centroids: Record<string, Float32Array> = {};
  if (on.has("prf")) {
    for (const v of vectorSets) {
      const vecs = ctx.docVectors[v].slice(0, PRF_DOCS);
      const c = new Float32Array(vecs[0]?.length ?? 0);
      for (const x of vecs) for (let j = 0; j < c.length; j++) c[j] += x[j] / vecs.length;
      centroids[v] = c;
    }
  }
  return rows.map((i, r) => {
    const c = ctx.cands[i];
    const doc = ctx.docs[r];
    const out: number[] = [];
    if (on.has("lexical")) {
      out.push(norm.bm25[i], c.title / maxTitle, c.abstract / maxAbs, 1 / Math.log2(2 + c.bm25Rank));
      out.push(ctx.fused[i] / maxFused, lexConf);
    }
    if (on.has("dense")) {
      for (const v of vectorSets) {
        out.push(c.dense[v], norm.dense[v][i], 1 / Math.log2(2 + c.denseRank[v]), norm.dense[v][i] * lexConf);
      }
    }
    const sentTokens = doc.tokens;
    if (on.has("coverage")) {
      out.push(c.coverage);
      const sentTerms = doc.terms;
      let best = 0;
      for (const toks of sentTerms) {
        // The query terms in this sentence, marked by index; their idf summed in query order.
        stamp++;
        for (const t of toks) {
          const k = queryIndex.get(t);
          if (k !== undefined) seen[k] = stamp;
        }
        let s = 0;
        for (let k = 0; k < ctx.query.length; k++) if (seen[k] === stamp) s += ctx.query[k].idf;
        best = Math.max(best, s / totalIdf);
      }
      out.push(best, proximity(queryOrder, sentTerms));
      const titleSet = new Set(doc.title);
      let t = 0;
      for (const q of ctx.query) if (titleSet.has(q.term)) t += q.idf;
      out.push(t / totalIdf, Math.log1p(sentTokens.reduce((n, x) => n + x.length, 0)));
    }
    if (on.has("numbers")) {
      let hit = 0;
      for (const n of claimNumbers) if (sentTokens.some((s) => s.includes(n))) hit++;
      out.push(hit, claimNumbers.length - hit);
    }
    if (on.has("prf")) {
      for (const v of vectorSets) out.push(dotf(centroids[v], ctx.docVectors[v][r]));
    }
    if (on.has("wordvec")) out.push(bestSentence(ctx.claimSif, doc.sif));
    return Float32Array.from(out);
  });
}

/** Highest SIF cosine of the claim with one of the doc's sentences (0 without vectors): sif_best_sentence. */
export function bestSentence(
  claimSif: Float32Array | undefined,
  sentences: Float32Array[] | undefined,
): number {
  let best = 0;
  if (claimSif && sentences) for (const s of sentences) best = Math.max(best, dotf(claimSif, s));
  return best;
}

/**
 * Bounds of sif_best_sentence (a cosine of unit float32 vectors, floored at 0; the top allows for rounding), so a
 * caller can bound a linear score before the sentence vectors are computed.
 */
export const BEST_SENTENCE_RANGE = [0, 1.001] as const;

function dotf(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j] * b[j];
  return s;
}

/**
 * Share of adjacent claim-term pairs that occur within 3 tokens of each other in the doc (order-free); the doc's
 * tokens by sentence, counted as one sequence.
 */
export function proximity(queryOrder: string[], docTokens: readonly string[][]): number {
  if (queryOrder.length < 2) return 0;
  const wanted = new Set(queryOrder);
  const positions = new Map<string, number[]>();
  let at = 0;
  for (const sentence of docTokens) {
    for (const t of sentence) {
      if (wanted.has(t)) {
        const list = positions.get(t);
        if (list) list.push(at);
        else positions.set(t, [at]);
      }
      at++;
    }
  }
  let hits = 0;
  for (let i = 0; i + 1 < queryOrder.length; i++) {
    const a = positions.get(queryOrder[i]);
    const b = positions.get(queryOrder[i + 1]);
    if (a && b && a.some((p) => b.some((q) => q !== p && Math.abs(q - p) <= 3))) hits++;
  }
  return hits / (queryOrder.length - 1);
}
