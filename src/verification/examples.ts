/**
 * Verification examples (claim, abstract sentences, label, rationale) built from the training sets, and their
 * deterministic train/dev split by claim id.
 *
 * SciFact: evidence abstracts give Supports/Refutes with rationale sentences; the claim's cited non-evidence
 * abstracts and its most TF-IDF-similar non-evidence abstracts (what a retriever would bring back) give NEI.
 * Climate-FEVER: each (claim, evidence sentence) is a one-sentence abstract with the sentence's label.
 * Own: our pairs on the built-in corpus (data/judged, data/abstract-claims), the deciding sentences as rationale.
 */
import type { ClimateFeverClaim, SciFactClaim } from "../data/training-sets.ts";
import { hashSplit } from "../learning/split.ts";
import { TfidfVectorizer } from "../learning/tfidf.ts";
import type { CorpusAbstract, VerificationExample } from "../types.ts";
import { NEI } from "../types.ts";

export type Source = "scifact" | "climate-fever" | "own";

export interface SourcedExample extends VerificationExample {
  source: Source;
  /** Our own pair of a claim as people post it, judged by reading the abstract (data/judged), not a written claim. */
  judged?: boolean;
}

export interface SciFactPairOptions {
  /** Lexically similar non-evidence abstracts added per claim as NEI. */
  similarNei: number;
}

export function sciFactExamples(
  claims: readonly SciFactClaim[],
  corpus: readonly CorpusAbstract[],
  options: SciFactPairOptions = { similarNei: 2 },
): SourcedExample[] {
  const byId = new Map(corpus.map((a) => [a.id, a]));
  const similar =
    options.similarNei > 0 ? similarAbstracts(claims, corpus, options.similarNei + 8) : new Map();
  const out: SourcedExample[] = [];
  for (const c of claims) {
    const claimId = `sf:${c.id}`;
    const seen = new Set<string>();
    const push = (docId: string, label: VerificationExample["label"], rationale: number[]) => {
      const doc = byId.get(docId);
      if (!doc || seen.has(docId)) return;
      seen.add(docId);
      const sentences = doc.sentences ?? [doc.abstract];
      const valid = rationale.filter((i) => i >= 0 && i < sentences.length);
      out.push({
        source: "scifact",
        claimId,
        claim: c.claim,
        abstractId: docId,
        title: doc.title,
        sentences,
        label,
        rationale: valid,
      });
    };
    for (const [docId, ev] of c.evidence) push(docId, ev.label, ev.sentences);
    for (const docId of c.cited) push(docId, NEI, []);
    let added = 0;
    for (const docId of similar.get(c.id) ?? []) {
      if (added >= options.similarNei) break;
      if (seen.has(docId) || c.evidence.has(docId)) continue;
      push(docId, NEI, []);
      added++;
    }
  }
  return out;
}

/** For each claim, the ids of the `k` most similar abstracts by word TF-IDF cosine (ties by id). */
function similarAbstracts(
  claims: readonly SciFactClaim[],
  corpus: readonly CorpusAbstract[],
  k: number,
): Map<string, string[]> {
  const docText = (a: CorpusAbstract) => `${a.title ?? ""} ${a.abstract}`;
  const tfidf = TfidfVectorizer.fit(corpus.map(docText), {
    analyzer: "word",
    ngram: [1, 1],
    minDf: 2,
    sublinearTf: true,
  });
  // Inverted index: term -> (doc, weight), so each claim only touches the documents sharing a term.
  const postings: { doc: number; w: number }[][] = Array.from({ length: tfidf.dim }, () => []);
  corpus.forEach((a, d) => {
    const v = tfidf.transform(docText(a));
    for (let i = 0; i < v.indices.length; i++) postings[v.indices[i]].push({ doc: d, w: v.values[i] });
  });
  const out = new Map<string, string[]>();
  for (const c of claims) {
    const q = tfidf.transform(c.claim);
    const scores = new Map<number, number>();
    for (let i = 0; i < q.indices.length; i++) {
      for (const p of postings[q.indices[i]]) scores.set(p.doc, (scores.get(p.doc) ?? 0) + p.w * q.values[i]);
    }
    const top = [...scores.entries()]
      .sort((a, b) => b[1] - a[1] || (corpus[a[0]].id < corpus[b[0]].id ? -1 : 1))
      .slice(0, k)
      .map(([d]) => corpus[d].id);
    out.set(c.id, top);
  }
  return out;
}

export function climateFeverExamples(claims: readonly ClimateFeverClaim[]): SourcedExample[] {
  const out: SourcedExample[] = [];
  for (const c of claims) {
    const seen = new Set<string>();
    for (const e of c.evidences) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      out.push({
        source: "climate-fever",
        claimId: `cf:${c.id}`,
        claim: c.claim,
        abstractId: `cf:${e.id}`,
        title: e.article || undefined,
        sentences: [e.text],
        label: e.label,
        rationale: e.label === NEI ? [] : [0],
      });
    }
  }
  return out;
}

export const SPLIT_SALT = "verification";
export const DEV_FRACTION = 0.2;

/** Train/dev by claim id: a claim and all its pairs fall on the same side. */
export function splitByClaim<T extends { claimId: string }>(
  examples: readonly T[],
  devFraction = DEV_FRACTION,
): { train: T[]; dev: T[] } {
  const train: T[] = [];
  const dev: T[] = [];
  for (const e of examples) (hashSplit(e.claimId, devFraction, SPLIT_SALT) === "dev" ? dev : train).push(e);
  return { train, dev };
}

/** A labelled pair of our own data: a judged pair (data/judged) or a claim written from an abstract. */
export interface OwnPair {
  claimId: string;
  claim: string;
  abstractId: string;
  label: VerificationExample["label"];
  /** The deciding sentences, verbatim. */
  evidence: readonly string[];
}

const squash = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * Our pairs as verification examples, with the abstract's sentences (as the index splits them) from `abstractOf`;
 * the rationale is the sentences that hold a deciding sentence or are held by one. Pairs whose abstract is unknown
 * are left out.
 */
export function ownExamples(
  pairs: readonly OwnPair[],
  abstractOf: (id: string) => { title?: string; sentences: string[] } | undefined,
): SourcedExample[] {
  const out: SourcedExample[] = [];
  for (const p of pairs) {
    const doc = abstractOf(p.abstractId);
    if (!doc) continue;
    const evidence = p.evidence.map(squash).filter((e) => e !== "");
    const rationale = doc.sentences
      .map((s, i) => ({ s: squash(s), i }))
      .filter(({ s }) => s !== "" && evidence.some((e) => e.includes(s) || s.includes(e)))
      .map(({ i }) => i);
    out.push({
      source: "own",
      claimId: p.claimId,
      claim: p.claim,
      abstractId: p.abstractId,
      title: doc.title,
      sentences: doc.sentences,
      label: p.label,
      rationale: p.label === NEI ? [] : rationale,
    });
  }
  return out;
}
