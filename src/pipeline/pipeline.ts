/**
 * The product in one object: index, retriever (with its re-ranker), verifier and narrative classifier are loaded
 * once, then `check` runs narratives + retrieval + verification of the top k abstracts for a claim. The CLI's
 * `check`, the HTTP server and the benchmarks all go through here.
 *
 * USE-lite is the costly part (about 30 ms a claim, 50 ms a sentence on the reference machine), so it is spent
 * only where it pays: one in-process encoder serves the narratives model and the verifier, the claim is embedded
 * once (the vector cache serves the later stages), and the verifier reads the sentence boundaries the index already
 * stores instead of splitting abstracts again; only the verifier's few candidate sentences per abstract are new.
 */
import { basename, join } from "node:path";
import { isBuiltinOnly } from "../data/builtin-corpus.ts";
import { DataError } from "../data/errors.ts";
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { USE_LITE_NAME } from "../encoders/use-lite-model.ts";
import type { StoredDoc } from "../index/schema.ts";
import {
  FAST_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../narratives/classifier.ts";
import { type NarrativesConfig, openNarrativesBackend } from "../narratives/config.ts";
import type { RetrievalConfig } from "../retrieval/byo.ts";
import { openRetriever } from "../retrieval/load.ts";
import { checkClaim, type Retriever } from "../retrieval/retriever.ts";
import { loadScopeDetector, type ScopeDetector, scopeOf } from "../scope/scope.ts";
import { NO_NARRATIVE, narrativeInfo } from "../taxonomy/cards.ts";
import { readableTitle } from "../text/tex.ts";
import { NEI } from "../types.ts";
import { openBuiltinVerifier } from "../verification/builtin.ts";
import { openVerifier, type VerifierConfig } from "../verification/config.ts";
import {
  GATE_LEAD,
  type GateDoc,
  gatedProbs,
  loadRelevanceGate,
  RELEVANCE_GATE,
  type RelevanceGate,
} from "../verification/relevance.ts";
import { abstractSentences, type Verdict, type Verifier } from "../verification/verifier.ts";
import { type DefaultIndexProgress, ensureDefaultIndex } from "./default-index.ts";
import type { AbstractRecord, CheckResult, Evidence, NarrativeHit, PairVerdict, Scope } from "./result.ts";
import { assess } from "./summary.ts";

/** Most abstracts one check may ask for (each is verified, so the cost grows with k). */
export const MAX_K = 50;
export const DEFAULT_K = 5;

/**
 * How many retrieved abstracts `check` reads with the relevance gate to fill k places: the top 2k (at most k + 10).
 * Those the gate passes as about the claim are shown first, in retrieval order, then the rest, likeliest about first:
 * an abstract about the claim at rank 7 is worth more to a fact-checker than an off-subject one at rank 3.
 */
export const headSize = (k: number): number => Math.min(2 * k, k + 10);

/**
 * The k of `relevance` (P(about) per retrieved abstract, in retrieval order; null when there is no gate) to show:
 * the indices the gate passes, in retrieval order, then the others by P(about), highest first (ties in retrieval
 * order): the gate is calibrated, so this fills the places left with the abstracts likeliest to be about the claim.
 * Without a gate, the first k.
 */
export function aboutFirst(relevance: readonly (number | null)[], k: number): number[] {
  const order = relevance.map((_, i) => i);
  const p = (i: number) => relevance[i] ?? Number.NEGATIVE_INFINITY;
  const passed = (i: number) => p(i) >= RELEVANCE_GATE;
  const rest = order.filter((i) => !passed(i)).sort((a, b) => p(b) - p(a) || a - b);
  return [...order.filter(passed), ...rest].slice(0, k);
}

/** An abstract given as text instead of an index id. */
export interface AbstractText {
  abstract: string;
  title?: string;
}

export interface Pipeline {
  /** Index directory the pipeline searches. */
  readonly indexDir: string;
  /** Verifier backend name, e.g. "builtin:v4". */
  readonly verifierName: string;
  /** Number of abstracts in the index. */
  readonly abstracts: number;
  /**
   * How abstracts are ranked: "re-ranked" (the shipped re-ranker), "fused" (BM25 + dense) or "bm25". An index
   * lacking a vector set the re-ranker needs falls back to "fused", so this is worth showing at start-up.
   */
  readonly retrieval: "re-ranked" | "fused" | "bm25";
  /** The backend of every stage, e.g. {narratives: "builtin:fast", retrieval: "bm25+...", verification: "onnx:..."}. */
  readonly backends: { narratives: string; retrieval: string; verification: string };
  check(claim: string, options?: { k?: number }): Promise<CheckResult>;
  /** Out of scope (not English, not about climate): no narratives and p_narrative null, as in check. */
  narratives(
    claim: string,
  ): Promise<{ scope: Scope; narratives: NarrativeHit[]; p_narrative: number | null }>;
  verify(claim: string, abstract: string | AbstractText): Promise<PairVerdict>;
  /** An abstract of the index by id; undefined when there is none. */
  abstract(id: string): AbstractRecord | undefined;
  close(): Promise<void>;
}

export interface PipelineOptions {
  /** Index directory; default: the default index (built on first use, see default-index.ts). */
  index?: string;
  /** Verifier backend settings (src/verification/config.ts); default: the built-in verifier. */
  verifier?: VerifierConfig;
  /** The narratives model without the sentence encoder, and stage-1 retrieval without the re-ranker. */
  fast?: boolean;
  /** A profile's retrieval section (its own ONNX models); default: the built-in retrieval. */
  retrieval?: RetrievalConfig;
  /** A profile's narratives section (e.g. a chat model); default: the shipped classifier. */
  narratives?: NarrativesConfig;
  /** Progress of building the default index. */
  onIndexProgress?: (p: DefaultIndexProgress) => void;
}

/** The already-loaded parts a pipeline runs on (openPipeline loads them; tests inject small ones). */
export interface PipelineParts {
  retriever: Retriever;
  verifier: Verifier;
  classifier: Pick<NarrativeClassifier, "classify">;
  /** The narratives backend's name (default "builtin"). */
  narrativesName?: string;
  /** The relevance gate; without one every abstract counts as about the claim (relevance null). */
  relevance?: Pick<RelevanceGate, "probabilities">;
  /** The climate classifier of the scope check; without one only the language is checked (p_climate null). */
  scope?: Pick<ScopeDetector, "pClimate">;
  /** Releases what the parts hold. */
  close(): Promise<void>;
}

const r4 = (x: number) => Math.round(x * 10000) / 10000;
const ms = (from: number) => Math.round((performance.now() - from) * 10) / 10;

function links(doc: Pick<StoredDoc, "doi" | "url" | "year">): Pick<PairVerdict, "year" | "doi" | "url"> {
  const out: Pick<PairVerdict, "year" | "doi" | "url"> = {};
  if (doc.year) out.year = doc.year;
  if (doc.doi) out.doi = doc.doi;
  const url =
    doc.url ?? (doc.doi ? `https://doi.org/${doc.doi.replace(/^https?:\/\/(dx\.)?doi\.org\//, "")}` : "");
  if (url) out.url = url;
  return out;
}

function record(doc: StoredDoc): AbstractRecord {
  return {
    abstract_id: doc.id,
    title: readableTitle(doc.title),
    title_raw: doc.title ?? null,
    ...links(doc),
    abstract: doc.abstract,
    sentences: doc.sentences,
  };
}

/**
 * One claim-abstract pair as shown: the verifier's verdict, unless the relevance gate says the abstract is not
 * about the claim; then it takes no side (gatedProbs: relevance x P(Supports), relevance x P(Refutes), rest NEI, so
 * NEI is the top class) and shows no rationale. Either way the label is the most probable class shown.
 */
function pairVerdict(
  id: string | null,
  title: string | null,
  sentences: string[],
  v: Verdict,
  relevance: number | null,
): Omit<PairVerdict, "year" | "doi" | "url"> {
  const about = relevance === null || relevance >= RELEVANCE_GATE;
  const probs = about ? v.probs : gatedProbs(v.probs, relevance);
  const label = about ? v.label : NEI;
  // Backends promise indices into the sentences; drop any that are not, rather than show a wrong sentence.
  const indices = about
    ? v.rationale.filter((i) => Number.isInteger(i) && i >= 0 && i < sentences.length)
    : [];
  return {
    abstract_id: id,
    title: readableTitle(title),
    title_raw: title,
    label,
    confidence: r4(about ? v.confidence : probs.nei),
    p_supports: r4(probs.supports),
    p_refutes: r4(probs.refutes),
    p_nei: r4(probs.nei),
    rationale: indices.map((i) => sentences[i]),
    rationale_indices: indices,
    sentences,
    relevance: relevance === null ? null : r4(relevance),
    about_claim: about,
  };
}

/** A pipeline over loaded parts. */
export function createPipeline(parts: PipelineParts): Pipeline {
  const { retriever, verifier, classifier } = parts;
  const docs = retriever.index.docs;
  // The index's USE-lite vectors of the gate's text, when it holds them: the gate then embeds only the claim.
  const useSet = retriever.index.manifest.vectors.use;
  const storedLead =
    useSet?.encoder === USE_LITE_NAME && useSet.text === GATE_LEAD.spec
      ? retriever.index.vectors.use
      : undefined;
  const relevanceOf = async (claim: string, docs: readonly GateDoc[]): Promise<(number | null)[]> =>
    parts.relevance ? parts.relevance.probabilities(claim, docs) : docs.map(() => null);

  async function classify(
    claim: string,
  ): Promise<{ hits: NarrativeHit[]; pNarrative: number; normative: number }> {
    const [p] = await classifier.classify([claim]);
    const hits = p.codes
      .map((code) => {
        const info = narrativeInfo(code);
        return {
          code,
          name: info.name,
          description: info.description,
          probability: r4(p.probabilities[code] ?? 0),
        };
      })
      .sort((a, b) => b.probability - a.probability);
    // Groups are one softmax, so P(group 4 or 5) is the sum of the two group-code marginals; a claim the model
    // names no group-4/5 narrative for is never treated as normative, whatever the marginals.
    const named = p.codes.some((c) => c.startsWith("4_") || c.startsWith("5_"));
    const normative = named ? (p.probabilities["4_0"] ?? 0) + (p.probabilities["5_0"] ?? 0) : 0;
    return { hits, pNarrative: r4(p.narrative), normative };
  }

  const scopeOfClaim = (claim: string): Scope =>
    scopeOf(claim, parts.scope ? parts.scope.pClimate(claim) : null);

  // The narratives models know English climate text only: on anything else their numbers mean nothing (a
  // weather remark got 1_3 at 0.65), so a claim out of scope is not assessed rather than given a phantom code.
  async function classifyInScope(
    claim: string,
    scope: Scope,
  ): Promise<{ hits: NarrativeHit[]; pNarrative: number | null; normative: number }> {
    if (!scope.in_scope) return { hits: [], pNarrative: null, normative: 0 };
    return classify(claim);
  }

  function docById(id: string): StoredDoc | undefined {
    const docno = docs.docno(id);
    return docno === undefined ? undefined : docs.get(docno);
  }

  return {
    indexDir: retriever.index.dir,
    verifierName: verifier.name,
    abstracts: docs.size,
    retrieval:
      retriever.reranker || retriever.crossEncoders
        ? "re-ranked"
        : retriever.vectorSets.length
          ? "fused"
          : "bm25",
    backends: {
      narratives: parts.narrativesName ?? "builtin",
      retrieval: retriever.description,
      verification: verifier.name,
    },

    async check(claim, options = {}) {
      const k = options.k ?? DEFAULT_K;
      if (!Number.isInteger(k) || k < 1 || k > MAX_K)
        throw new DataError("k", `k must be a whole number from 1 to ${MAX_K}, got ${k}`);
      checkClaim(claim);
      const started = performance.now();
      const scope = scopeOfClaim(claim);
      const { hits: narratives, pNarrative, normative } = await classifyInScope(claim, scope);
      const tNarratives = ms(started);

      const t1 = performance.now();
      const head = await retriever.retrieve(claim, parts.relevance ? headSize(k) : k);
      const headDocs = head.map((h) => docs.get(h.docno));
      const tRetrieval = ms(t1);

      const t2 = performance.now();
      const headSentences = headDocs.map((d) => abstractSentences(d));
      const headRelevance = await relevanceOf(
        claim,
        headDocs.map((d, i) => ({
          id: d.id,
          sentences: headSentences[i],
          title: d.title,
          vector: storedLead?.vector(head[i].docno),
        })),
      );
      const shown = aboutFirst(headRelevance, k);
      const foundDocs = shown.map((i) => headDocs[i]);
      const verdicts = await verifier.verifyPairs(
        foundDocs.map((d) => ({
          claim,
          abstractId: d.id,
          abstract: d.abstract,
          title: d.title,
          sentences: d.sentences,
        })),
      );
      const evidence: Evidence[] = shown.map((h, i) => {
        const d = headDocs[h];
        const v = pairVerdict(d.id, d.title ?? null, headSentences[h], verdicts[i], headRelevance[h]);
        return {
          ...v,
          abstract_id: d.id,
          ...links(d),
          rank: h + 1,
          retrieval_score: r4(head[h].score),
        };
      });
      const tVerification = ms(t2);

      const named = narratives.find((h) => h.code !== NO_NARRATIVE);
      const { summary, caution } = assess(evidence, normative, scope, named);
      return {
        claim,
        scope,
        narratives,
        p_narrative: pNarrative,
        evidence,
        summary,
        caution,
        timings_ms: {
          narratives: tNarratives,
          retrieval: tRetrieval,
          verification: tVerification,
          total: ms(started),
        },
      };
    },

    async narratives(claim) {
      checkClaim(claim);
      const scope = scopeOfClaim(claim);
      const { hits, pNarrative } = await classifyInScope(claim, scope);
      return { scope, narratives: hits, p_narrative: pNarrative };
    },

    async verify(claim, abstract) {
      checkClaim(claim);
      if (typeof abstract === "string") {
        const doc = docById(abstract);
        if (!doc) throw new DataError("abstract_id", `no abstract "${abstract}" in the index`);
        const [v] = await verifier.verifyPairs([
          { claim, abstractId: doc.id, abstract: doc.abstract, title: doc.title, sentences: doc.sentences },
        ]);
        const sentences = abstractSentences(doc);
        const [relevance] = await relevanceOf(claim, [{ id: doc.id, sentences, title: doc.title }]);
        return { ...pairVerdict(doc.id, doc.title ?? null, sentences, v, relevance), ...links(doc) };
      }
      if (abstract.abstract.trim() === "") throw new DataError("abstract", "abstract is empty");
      const [v] = await verifier.verifyPairs([{ claim, abstract: abstract.abstract, title: abstract.title }]);
      const sentences = abstractSentences(abstract);
      const [relevance] = await relevanceOf(claim, [{ sentences, title: abstract.title }]);
      return pairVerdict(null, abstract.title ?? null, sentences, v, relevance);
    },

    abstract(id) {
      const doc = docById(id);
      return doc ? record(doc) : undefined;
    },

    close: () => parts.close(),
  };
}

/**
 * The narratives model `check`, `serve` and the page name narratives with: the fast one, with or without --fast.
 * On the dev splits (BENCHMARKS.md, "Narratives: the model check uses") the full model, whose sentence vector reads
 * topic more than stance, named a narrative on most written mainstream and rebuttal texts and on all five accurate
 * claims users reported; the fast one on far fewer. Calling accurate science disinformation is the product's worst
 * error, so check takes the fast model; `classify` and `predict` (task 2, scored by CARDS F1, where the full model
 * is ahead) keep the full one.
 */
export function narrativesModelPath(): string {
  return join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE);
}

/** Loads everything once: index, retriever and re-ranker, verifier, narratives model. */
export async function openPipeline(options: PipelineOptions = {}): Promise<Pipeline> {
  const indexDir = options.index ?? (await ensureDefaultIndex(options.onIndexProgress));
  const closers: (() => Promise<void> | void)[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const { retriever, close } = await openRetriever(indexDir, {
      ...(options.fast ? { model: null } : {}),
      retrieval: options.retrieval,
    });
    closers.push(close);
    // One in-process encoder for the narratives model and the built-in verifier.
    let encoder: SentenceEncoder | undefined;
    const sharedEncoder = async () => {
      if (!encoder) {
        encoder = await openUseLite({ workers: 0 });
        const e = encoder;
        closers.push(() => e.close());
      }
      return encoder;
    };
    const narratives = options.narratives ?? { backend: "builtin" };
    let classifier: Pick<NarrativeClassifier, "classify">;
    let narrativesName: string;
    if (narratives.backend === "builtin") {
      const path = narrativesModelPath();
      const json = await readNarrativeModel(path);
      classifier = new NarrativeClassifier(json, json.encoder ? await sharedEncoder() : undefined);
      narrativesName = `builtin:${basename(path, ".json")}`;
    } else {
      const backend = openNarrativesBackend(narratives);
      classifier = backend;
      narrativesName = backend.name;
    }
    const config = options.verifier ?? { backend: "builtin" };
    const verifier =
      config.backend === "builtin"
        ? await openBuiltinVerifier({
            modelPath: config.model,
            encoder: sharedEncoder,
            builtinCorpus: isBuiltinOnly(retriever.index.manifest.sources),
          })
        : await openVerifier(config);
    closers.push(() => verifier.close());
    const scope = await loadScopeDetector();
    const relevance = await loadRelevanceGate(
      (t) => scope.pClimate(t),
      undefined,
      async (texts) => (await sharedEncoder()).embed(texts),
    );
    return createPipeline({
      retriever,
      verifier,
      classifier,
      narrativesName,
      relevance,
      scope,
      close: closeAll,
    });
  } catch (e) {
    await closeAll();
    throw e;
  }
}
