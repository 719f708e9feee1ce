/**
 * Claim -> ranked abstracts: stage 1 candidates (BM25 + dense, fused linearly), stage 2 the trained re-ranker
 * over the top fused candidates. Without a re-ranker (or with an index lacking the vectors it needs) the fused
 * order is the answer; without vectors that is plain BM25.
 */
import { DataError } from "../data/errors.ts";
import { normalizeInPlace } from "../encoders/vector.ts";
import { indexTerms, type QueryTerm } from "../index/bm25.ts";
import { TITLE_AND_ABSTRACT } from "../index/embed-text.ts";
import type { OpenIndex } from "../index/open.ts";
import { rm3Expand } from "../index/rm3.ts";
import { tokenize } from "../text/tokenize.ts";
import type { Claim, Task1Prediction } from "../types.ts";
import type { CrossEncoderStage } from "./byo.ts";
import { type Candidate, type CandidateDepth, CandidateGather, DEFAULT_DEPTH } from "./candidates.ts";
import {
  type AnalysedDoc,
  analyseDoc,
  BEST_SENTENCE_RANGE,
  bestSentence,
  computeFeatures,
  type Family,
  featureNames,
} from "./features.ts";
import { type FusionRule, type FusionWeights, linearFusion, order, rrfCombine } from "./fusion.ts";
import type { Reranker } from "./reranker.ts";

/** Longest claim accepted; ClimateCheck claims are one or two sentences. */
export const MAX_CLAIM_CHARS = 5000;
/** Analysed docs kept by a retriever (about 25 KB each, with their sentence vectors). */
const DOC_MEMO = 4096;

export interface QueryEncoder {
  name: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** SIF-weighted word vectors (for the sentence-level soft-matching feature). */
export interface WordSif {
  sif(tokens: string[]): Float32Array;
}

export interface RetrieverOptions {
  /** Query encoder per vector set of the index; sets without one are not searched. */
  encoders?: Record<string, QueryEncoder>;
  reranker?: Reranker;
  words?: WordSif;
  /** Stage 1 fusion when there is no re-ranker (default: BM25 alone). */
  fusion?: FusionWeights;
  depth?: CandidateDepth;
  /** Stage 1 scores by this rule instead of linear fusion (a profile's own models: RRF, or the dense score alone). */
  fusionRule?: FusionRule;
  /** Cross-encoders over the top fused candidates (a profile's own models; instead of the trained re-ranker). */
  crossEncoders?: CrossEncoderStage;
}

export interface RetrievedAbstract {
  id: string;
  docno: number;
  score: number;
}

/** Stage 1 of one claim: candidates, fused scores and the fused order. */
export interface Stage1 {
  claim: string;
  query: QueryTerm[];
  cands: Candidate[];
  fused: number[];
  order: number[];
}

/** Throws a DataError for a claim that cannot be searched (empty, no words, too long). */
export function checkClaim(text: string, where = "claim"): void {
  if (text.length > MAX_CLAIM_CHARS) {
    throw new DataError(where, `claim is ${text.length} characters; at most ${MAX_CLAIM_CHARS} are accepted`);
  }
  if (tokenize(text).length === 0) throw new DataError(where, "claim is empty (no words)");
}

export class Retriever {
  readonly index: OpenIndex;
  readonly reranker?: Reranker;
  private readonly encoders: Record<string, QueryEncoder>;
  private readonly words?: WordSif;
  readonly fusion: FusionWeights;
  readonly depth: CandidateDepth;
  readonly fusionRule?: FusionRule;
  readonly crossEncoders?: CrossEncoderStage;

  constructor(index: OpenIndex, options: RetrieverOptions = {}) {
    this.index = index;
    this.encoders = {};
    for (const [name, enc] of Object.entries(options.encoders ?? {})) {
      const info = index.manifest.vectors[name];
      if (!info) continue;
      if (info.encoder !== enc.name) {
        throw new DataError(
          index.dir,
          `vector set "${name}" was built with ${info.encoder}, but the query encoder is ${enc.name}; ingest again`,
        );
      }
      this.encoders[name] = enc;
    }
    this.words = options.words;
    const r = options.reranker;
    // A re-ranker is used only when every vector set it was trained with is searchable here.
    const usable =
      r &&
      Object.entries(r.json.vectorSets).every(
        ([n, e]) => this.encoders[n] && index.manifest.vectors[n]?.encoder === e,
      );
    this.reranker = usable && (!r.json.families.includes("wordvec") || this.words) ? r : undefined;
    this.fusion = this.reranker?.json.fusion ?? options.fusion ?? { bm25: 1, dense: {} };
    // The BM25 depth is the index's (chosen per corpus kind); the dense depth the re-ranker's.
    const depth = options.depth ?? this.reranker?.json.depth ?? DEFAULT_DEPTH;
    this.depth = { ...depth, bm25: options.depth?.bm25 ?? index.manifest.bm25?.depth ?? depth.bm25 };
    this.fusionRule = options.fusionRule;
    this.crossEncoders = options.crossEncoders;
  }

  /** What ranks the abstracts, e.g. "bm25+dense:onnx:e5/mean+norm/512 (rrf k=60)" (for /healthz and logs). */
  get description(): string {
    const sets = this.vectorSets.map((n) => `${n}:${this.encoders[n].name}`);
    const first = ["bm25", ...sets].join("+");
    const fusion = sets.length ? ` (${this.fusionRule?.name ?? "linear"})` : "";
    const c = this.crossEncoders;
    const second = c
      ? ` > ${c.scorers.map((s) => s.name).join(", ")} on top ${c.topN}${c.scorers.length > 1 ? ` (rrf k=${c.rrfK})` : ""}`
      : this.reranker
        ? " > trained re-ranker"
        : "";
    return `${first}${fusion}${second}`;
  }

  /** Vector sets searched in stage 1. */
  get vectorSets(): string[] {
    return Object.keys(this.encoders);
  }

  /**
   * Stage 1 for several claims (claims are embedded in one call per encoder). Every encoder is started first; an
   * encoder working off this thread (a USE-lite worker) embeds while this thread runs BM25 and the sets whose
   * vectors are ready, and scores the docs found so far.
   */
  async stage1(claims: string[], fusion = this.fusion): Promise<Stage1[]> {
    const names = Object.keys(this.encoders);
    const pending = new Map(
      names.map((n) => {
        const p = this.encoders[n].embed(claims).then((v) => ({ n, v }));
        // Handled here too: a second failure while the first is being thrown must not go unhandled.
        p.catch(() => {});
        return [n, p] as const;
      }),
    );
    // Encoders hand work to their workers in promise callbacks: let those run before this thread gets busy.
    if (names.length) await new Promise<void>((resolve) => setImmediate(resolve));
    const queries = claims.map((claim) => this.query(claim));
    const gathers = queries.map((q) => new CandidateGather(this.index, q, names, this.depth));
    while (pending.size) {
      const { n, v } = await Promise.race(pending.values());
      pending.delete(n);
      gathers.forEach((g, i) => {
        g.add(n, v[i]);
      });
      if (pending.size) for (const g of gathers) g.scoreKnown();
    }
    return claims.map((claim, i) => {
      const cands = gathers[i].finish();
      const fused = this.fusionRule ? this.fusionRule.fuse(cands) : linearFusion(cands, fusion);
      return { claim, query: queries[i], cands, fused, order: order(cands, fused) };
    });
  }

  /** The BM25 query of a claim, expanded by RM3 when the index's settings ask for it. */
  query(claim: string): QueryTerm[] {
    const { bm25 } = this.index;
    const q = bm25.queryTerms(claim);
    const rm3 = this.index.manifest.bm25?.rm3;
    if (!rm3) return q;
    return rm3Expand(bm25, q, bm25.search(q, rm3.docs), (d) => this.docTerms(d), rm3);
  }

  private docTerms(docno: number): string[] {
    const d = this.index.docs.get(docno);
    return indexTerms(`${d.title ?? ""} ${d.abstract}`, this.index.bm25.analyzer);
  }

  /**
   * Features of the top `depth` fused candidates of a stage-1 result (rows in fused order). With
   * `sentenceVectors` false, sif_best_sentence is left at 0 and the docs' sentence vectors are not computed (see
   * rank()).
   */
  features(
    s: Stage1,
    families: readonly Family[],
    depth: number,
    sentenceVectors = true,
  ): { rows: number[]; x: Float32Array[]; claimSif?: Float32Array } {
    const rows = s.order.slice(0, depth);
    const docs = rows.map((i) => this.analysedDoc(s.cands[i].docno, sentenceVectors));
    const docVectors: Record<string, Float32Array[]> = {};
    for (const n of this.vectorSets)
      docVectors[n] = rows.map((i) => this.index.vectors[n].vector(s.cands[i].docno));
    const words = this.words;
    const claimSif = words ? unit(words.sif(tokenize(s.claim))) : undefined;
    const x = computeFeatures(
      {
        claim: s.claim,
        query: s.query,
        term: (t) => this.index.bm25.term(t),
        cands: s.cands,
        fused: s.fused,
        docs,
        docVectors,
        claimSif,
      },
      rows,
      families,
      this.vectorSets,
    );
    return { rows, x, claimSif };
  }

  /**
   * Analysed docs by docno, the DOC_MEMO most recently used: popular abstracts come back claim after claim, and
   * tokenising, stemming and embedding their sentences was most of the feature time. Sentence vectors are
   * computed when first asked for.
   */
  private readonly docMemo = new Map<number, AnalysedDoc>();
  private analysedDoc(docno: number, sentenceVectors = true): AnalysedDoc {
    let a = this.docMemo.get(docno);
    if (a) {
      // A Map iterates in insertion order: re-inserting keeps the least recently used first.
      this.docMemo.delete(docno);
    } else {
      a = analyseDoc(this.index.docs.get(docno), (t) => this.index.bm25.term(t));
      if (this.docMemo.size >= DOC_MEMO) this.docMemo.delete(this.docMemo.keys().next().value as number);
    }
    const words = this.words;
    if (sentenceVectors && words && !a.sif) a.sif = a.tokens.map((tokens) => unit(words.sif(tokens)));
    this.docMemo.set(docno, a);
    return a;
  }

  /**
   * Final ranking of a stage-1 result: re-ranked head, then the rest in fused order. The re-ranker is linear, so
   * each candidate's score is bounded before its sentence vectors (most of the feature time at 400k abstracts)
   * are computed: candidates go in order of that bound, and once k are scored, those whose bound is below the
   * k-th score cannot enter the top k and keep no score. The top k and their scores are those of scoring all.
   */
  rank(s: Stage1, k: number): RetrievedAbstract[] {
    const r = this.reranker;
    if (!r) return this.ordered(s, [], [], k);
    const { families, rerankDepth } = r.json;
    const f = families.includes("wordvec")
      ? featureNames(families, this.vectorSets).indexOf("sif_best_sentence")
      : -1;
    if (f < 0 || !this.words || k >= Math.min(rerankDepth, s.order.length)) {
      const { rows, x } = this.features(s, families, rerankDepth);
      return this.ordered(
        s,
        rows,
        x.map((v) => r.score(v)),
        k,
      );
    }
    const { rows, x, claimSif } = this.features(s, families, rerankDepth, false);
    const bound = x.map((v) => {
      const at = Float32Array.from(v);
      return Math.max(
        ...BEST_SENTENCE_RANGE.map((b) => {
          at[f] = b;
          return r.score(at);
        }),
      );
    });
    const scores = rows.map(() => Number.NEGATIVE_INFINITY);
    // The k best scores so far, best first.
    const best: number[] = [];
    for (const j of rows.map((_, j) => j).sort((a, b) => bound[b] - bound[a])) {
      if (best.length === k && bound[j] < best[k - 1]) break;
      const doc = this.analysedDoc(s.cands[rows[j]].docno);
      x[j][f] = bestSentence(claimSif, doc.sif);
      const score = r.score(x[j]);
      scores[j] = score;
      const at = best.findIndex((b) => b < score);
      best.splice(at < 0 ? best.length : at, 0, score);
      if (best.length > k) best.pop();
    }
    return this.ordered(s, rows, scores, k);
  }

  /** The top k: `head` (the first fused candidates) by `scores`, best first, then the rest in fused order. */
  private ordered(s: Stage1, head: number[], scores: number[], k: number): RetrievedAbstract[] {
    const scored = head.map((i, j) => ({ i, score: scores[j] }));
    scored.sort((a, b) => b.score - a.score || s.cands[a.i].docno - s.cands[b.i].docno);
    const out = scored.slice(0, k).map((h) => this.hit(s, h.i, h.score));
    for (const i of s.order.slice(head.length)) {
      if (out.length >= k) break;
      out.push(this.hit(s, i, s.fused[i]));
    }
    return out;
  }

  private hit(s: Stage1, i: number, score: number): RetrievedAbstract {
    const docno = s.cands[i].docno;
    return { id: this.index.docs.id(docno), docno, score };
  }

  /**
   * Final rankings of stage-1 results: rank() each, or with cross-encoders, their combined order over the top N
   * fused candidates, then the rest in fused order.
   */
  async rankAll(stages: Stage1[], k: number): Promise<RetrievedAbstract[][]> {
    const c = this.crossEncoders;
    if (!c) return stages.map((s) => this.rank(s, k));
    const out: RetrievedAbstract[][] = [];
    for (const s of stages) {
      const head = s.order.slice(0, c.topN);
      const texts = head.map((i) => TITLE_AND_ABSTRACT.text(this.index.docs.get(s.cands[i].docno)));
      const lists: number[][] = [];
      for (const scorer of c.scorers) lists.push(await scorer.score(s.claim, texts));
      // One model: its own scores; several: their reciprocal rank fusion.
      out.push(this.ordered(s, head, lists.length === 1 ? lists[0] : rrfCombine(lists, c.rrfK), k));
    }
    return out;
  }

  /** The top k abstracts for one claim. */
  async retrieve(claim: string, k = 10): Promise<RetrievedAbstract[]> {
    checkClaim(claim);
    const [s] = await this.stage1([claim]);
    return (await this.rankAll([s], k))[0];
  }

  /** Task 1 predictions (no labels) for many claims; the caller checks the claims first. */
  async retrieveAll(claims: Claim[], k = 10): Promise<Task1Prediction[]> {
    const out: Task1Prediction[] = [];
    const chunk = 256;
    for (let c = 0; c < claims.length; c += chunk) {
      const part = claims.slice(c, c + chunk);
      const ranked = await this.rankAll(await this.stage1(part.map((x) => x.text)), k);
      ranked.forEach((hits, i) => {
        hits.forEach((h, r) => {
          out.push({ claimId: part[i].id, abstractId: h.id, rank: r + 1 });
        });
      });
    }
    return out;
  }
}

const unit = (v: Float32Array): Float32Array => normalizeInPlace(Float32Array.from(v));
