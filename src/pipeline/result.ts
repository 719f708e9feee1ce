/**
 * The JSON objects the product returns (`climatecheck check --json`, the HTTP API, the web page). Field names are
 * snake_case because they are a wire format; docs/api.md documents them field by field and src/server/openapi.ts
 * describes the same shapes.
 */
import type { Label } from "../types.ts";

/** One CARDS code the claim carries, with its marginal probability. */
export interface NarrativeHit {
  code: string;
  name: string;
  description: string;
  probability: number;
}

/** A verdict on one claim-abstract pair, with the abstract's sentences so a page can highlight the rationale. */
export interface PairVerdict {
  /** null for an abstract given as text rather than by id. */
  abstract_id: string | null;
  /** The title with TeX-like markup made readable (2{\deg}C -> 2°C); null when there is none. */
  title: string | null;
  /** The title as the corpus has it. */
  title_raw: string | null;
  year?: number;
  doi?: string;
  /** The abstract's own URL, else https://doi.org/DOI. */
  url?: string;
  label: Label;
  /** Probability of the chosen label. */
  confidence: number;
  p_supports: number;
  p_refutes: number;
  p_nei: number;
  /** The rationale sentences' text (empty for Not Enough Information). */
  rationale: string[];
  /** Indices of the rationale sentences in `sentences`. */
  rationale_indices: number[];
  /** Every sentence of the abstract, in order. */
  sentences: string[];
  /**
   * P(the abstract is about the claim's subject), from the relevance gate (src/verification/relevance.ts); null
   * when no gate is loaded.
   */
  relevance: number | null;
  /**
   * relevance at or above the gate (0.5). When false the abstract takes no side: P(Supports) and P(Refutes) shown
   * are relevance x the verifier's, the rest is NEI, and the label is NEI.
   */
  about_claim: boolean;
}

/** A retrieved abstract: its rank and retrieval score, then the verdict. */
export interface Evidence extends PairVerdict {
  abstract_id: string;
  rank: number;
  retrieval_score: number;
}

export type Lean = "supports" | "refutes" | "mixed" | "insufficient" | "out_of_scope";

/** Counts are over the abstracts about the claim; the rest are counted in not_about_claim. */
export interface Summary {
  supports: number;
  refutes: number;
  nei: number;
  not_about_claim: number;
  lean: Lean;
  /** 0..1: how firmly the evidence backs the lean (see summarize in src/pipeline/summary.ts). */
  lean_confidence: number;
  text: string;
}

export interface Caution {
  needs_human_review: boolean;
  /** Plain-language reason; null when there is nothing to flag. */
  reason: string | null;
}

export interface Timings {
  narratives: number;
  retrieval: number;
  verification: number;
  total: number;
}

/** Whether the claim is one ClimateCheck checks: English, and about climate. */
export interface Scope {
  in_scope: boolean;
  /** P(the claim is about climate), from models/scope; null when no scope model is loaded. */
  p_climate: number | null;
  english: boolean;
  /** Why the claim is out of scope; null when in scope. */
  reason: string | null;
}

export interface CheckResult {
  claim: string;
  scope: Scope;
  /** The codes named (0_0 alone when none), most probable first; empty when the claim is out of scope. */
  narratives: NarrativeHit[];
  /**
   * Calibrated P(the claim carries any narrative); narratives is 0_0 exactly when this is below 0.5. Null when the
   * claim is out of scope: not assessed, because the model knows English climate text only.
   */
  p_narrative: number | null;
  evidence: Evidence[];
  summary: Summary;
  caution: Caution;
  /** Milliseconds per stage. */
  timings_ms: Timings;
}

/** An abstract of the index as the API returns it. */
export interface AbstractRecord {
  abstract_id: string;
  /** Readable, as in PairVerdict; title_raw as the corpus has it. */
  title: string | null;
  title_raw: string | null;
  year?: number;
  doi?: string;
  url?: string;
  abstract: string;
  sentences: string[];
}
