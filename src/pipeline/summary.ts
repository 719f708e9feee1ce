/**
 * From per-abstract verdicts to what a reader sees first: the lean of the evidence and whether a person should
 * review it. Pure functions, so the rules are tested directly and read in one place.
 *
 * Caution is narrative-aware: the ClimateCheck 2026 analysis found claims of CARDS groups 4 ("solutions won't
 * work") and 5 ("climate science is unreliable") to be normative or epistemological, so abstracts rarely settle
 * them. For such claims we say so and ask for review instead of showing a confident verdict.
 *
 * Only abstracts about the claim (the relevance gate) count, and the summary never calls evidence consistent when
 * abstracts about the claim disagree.
 */
import type { ScopeAnswer } from "../scope/scope.ts";
import { NEI } from "../types.ts";
import type { Caution, Evidence, Lean, Summary } from "./result.ts";

/** P(group 4) + P(group 5) at or above this (more likely than not) makes a claim normative for the caution. */
export const NORMATIVE_THRESHOLD = 0.5;
/** A lone decisive abstract is thin evidence; below this confidence the caution also says it is weak. */
export const THIN_CONFIDENCE = 0.6;
/**
 * One side alone gives a lean only when one of its verdicts is more likely than not: a Refutes at 40% beside
 * Supports at 35% is the most probable label of its abstract, but it is no ground to say the evidence leans.
 */
export const LEAN_MIN_CONFIDENCE = 0.5;

const round = (x: number) => Math.round(x * 1000) / 1000;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The claim's scope as the summary needs it (the scope detector's answer, src/scope/scope.ts). */
export type ScopeCheck = Pick<ScopeAnswer, "in_scope" | "reason">;
const IN_SCOPE: ScopeCheck = { in_scope: true, reason: null };

/**
 * Below this share of the decisive weight, a dissenting side does not make the lean "mixed": one marginal abstract
 * (low confidence, low relevance) beside a clear answer is shown as a dissent, not as a split, so that asking for
 * more abstracts (a larger k) cannot turn a clear answer into "mixed". 3 Supports (0.9, 0.8, 0.7) against 2 Refutes
 * (0.6, 0.5) is a share of 0.31: mixed.
 */
export const MIXED_MIN_SHARE = 0.25;

/** An abstract's weight in the lean: its verdict's confidence times P(about the claim) (1 without a gate). */
export const leanWeight = (e: Pick<Evidence, "confidence" | "relevance">): number =>
  e.confidence * (e.relevance ?? 1);

/**
 * Counts per label over the abstracts about the claim only (the relevance gate's about_claim); the others are
 * counted apart and never weigh on the lean. Each decisive abstract weighs leanWeight (confidence x relevance). The
 * lean: no decisive verdict is "insufficient"; when both sides are present and the smaller side holds at least
 * MIXED_MIN_SHARE of the weight it is "mixed" (lean_confidence: that share); otherwise the larger side leans
 * (lean_confidence: its mean confidence, scaled by 1 - the dissent's share), unless none of its verdicts reaches
 * LEAN_MIN_CONFIDENCE ("insufficient"). A claim out of scope gets no lean ("out_of_scope", 0).
 */
export function summarize(evidence: readonly Evidence[], scope: ScopeCheck = IN_SCOPE): Summary {
  const relevant = evidence.filter((e) => e.about_claim);
  let supports = 0;
  let refutes = 0;
  let s = 0;
  let r = 0;
  let ws = 0;
  let wr = 0;
  for (const e of relevant) {
    if (e.label === "Supports") {
      supports++;
      s += e.confidence;
      ws += leanWeight(e);
    } else if (e.label === "Refutes") {
      refutes++;
      r += e.confidence;
      wr += leanWeight(e);
    }
  }
  const nei = relevant.length - supports - refutes;
  const notAbout = evidence.length - relevant.length;
  const dissent = ws + wr > 0 ? Math.min(ws, wr) / (ws + wr) : 0;
  const side = ws >= wr ? "Supports" : "Refutes";
  let lean: Lean;
  let confidence: number;
  if (!scope.in_scope) {
    lean = "out_of_scope";
    confidence = 0;
  } else if (supports + refutes === 0) {
    lean = "insufficient";
    confidence = 0;
  } else if (supports > 0 && refutes > 0 && dissent >= MIXED_MIN_SHARE) {
    lean = "mixed";
    confidence = dissent;
  } else if (!relevant.some((e) => e.label === side && e.confidence >= LEAN_MIN_CONFIDENCE)) {
    lean = "insufficient";
    confidence = 0;
  } else if (side === "Supports") {
    lean = "supports";
    confidence = (s / supports) * (1 - dissent);
  } else {
    lean = "refutes";
    confidence = (r / refutes) * (1 - dissent);
  }
  const found = plural(evidence.length, "abstract", "abstracts");
  const aside = notAbout
    ? ` (${notAbout} of the ${found} found ${notAbout === 1 ? "is" : "are"} not about it)`
    : "";
  const counts = `Of ${plural(relevant.length, "abstract", "abstracts")} about this claim${aside}, ${supports} ${supports === 1 ? "supports" : "support"} it, ${refutes} ${refutes === 1 ? "refutes" : "refute"} it and ${nei} ${nei === 1 ? "does" : "do"} not say enough.`;
  const against = side === "Supports" ? refutes : supports;
  const despite =
    against > 0
      ? `, though ${against === 1 ? "one abstract weakly disagrees" : `${against} abstracts weakly disagree`}`
      : "";
  const verdict: Record<Lean, string> = {
    supports: `The evidence leans towards supporting the claim${despite}.`,
    refutes: `The evidence leans towards refuting the claim${despite}.`,
    mixed: "The evidence is mixed: some abstracts support the claim and some refute it.",
    insufficient:
      supports + refutes > 0
        ? "The abstracts found do not settle the claim: each one that takes a side does so with a probability below 50%."
        : "The abstracts found do not settle the claim.",
    out_of_scope: "No lean is given: the claim is outside what ClimateCheck checks.",
  };
  let text: string;
  if (evidence.length === 0) text = "No abstract was found for this claim.";
  else if (relevant.length === 0)
    text = `None of the ${found} found is about this claim, so they say nothing about it.`;
  else text = `${counts} ${verdict[lean]}`;
  if (!scope.in_scope && evidence.length > 0 && relevant.length > 0)
    text = `${verdict.out_of_scope} ${counts}`;
  return {
    supports,
    refutes,
    nei,
    not_about_claim: notAbout,
    lean,
    lean_confidence: round(confidence),
    text,
  };
}

/** The narrative named on the claim (the most probable one), as the caution needs it. */
export interface NamedNarrative {
  code: string;
  name: string;
  probability: number;
}

/**
 * Whether a person should review the verdict, and why: a claim out of scope (not about climate, not English), a
 * normative or epistemological claim (groups 4/5 with probability `normative` >= NORMATIVE_THRESHOLD), a claim
 * named as a contrarian narrative that the abstracts lean towards supporting (the two readings conflict: either the
 * abstracts carry a minority finding or the narrative model is wrong), nothing found or nothing about the claim, no
 * decisive abstract, decisive ones all below LEAN_MIN_CONFIDENCE, a lone decisive one, or abstracts that disagree.
 * No caution means: in scope, no such conflict, and two or more abstracts about the claim take a side, all the same
 * one.
 */
export function caution(
  evidence: readonly Evidence[],
  summary: Summary,
  normative: number,
  scope: ScopeCheck = IN_SCOPE,
  narrative?: NamedNarrative,
): Caution {
  const reasons: string[] = [];
  if (!scope.in_scope && scope.reason) reasons.push(scope.reason);
  if (narrative && summary.lean === "supports")
    reasons.push(
      `The claim reads as the contrarian narrative ${narrative.code} "${narrative.name}" (${Math.round(narrative.probability * 100)}%), yet the abstracts about it lean towards supporting it: an abstract can carry a minority finding, and the narrative reading can be wrong, so a person should weigh these abstracts against the wider literature.`,
    );
  if (normative >= NORMATIVE_THRESHOLD) {
    reasons.push(
      `This claim looks normative or epistemological (a "solutions won't work" or "science is unreliable" narrative, probability ${normative.toFixed(2)}): scientific abstracts rarely settle such claims, so treat the verdict as unconfirmed.`,
    );
  }
  const relevant = evidence.filter((e) => e.about_claim);
  const decisive = relevant.filter((e) => e.label !== NEI);
  if (evidence.length === 0) reasons.push("No abstract was found for this claim.");
  else if (relevant.length === 0)
    reasons.push("None of the abstracts found is about this claim: nothing here checks it.");
  else if (decisive.length === 0)
    reasons.push("None of the abstracts about this claim supports or refutes it: the evidence is thin.");
  else if (summary.lean === "mixed" || (summary.supports > 0 && summary.refutes > 0))
    reasons.push(
      `The abstracts about this claim disagree (${summary.supports} support it, ${summary.refutes} refute it): a person should read them before any verdict.`,
    );
  else if (decisive.length > 1 && summary.lean === "insufficient")
    reasons.push(
      "The abstracts that take a side all do so with probabilities below 50%: the evidence is thin.",
    );
  else if (decisive.length === 1)
    reasons.push(
      decisive[0].confidence < THIN_CONFIDENCE
        ? "Only one abstract takes a side, and with low confidence: the evidence is thin."
        : "Only one abstract takes a side: the evidence is thin.",
    );
  return reasons.length
    ? { needs_human_review: true, reason: reasons.join(" ") }
    : { needs_human_review: false, reason: null };
}

/**
 * The summary with the caution applied: a normative claim's lean_confidence is scaled by (1 - normative), so it is
 * never shown as confident, and its text starts by saying a person should review it.
 */
export function assess(
  evidence: readonly Evidence[],
  normative: number,
  scope: ScopeCheck = IN_SCOPE,
  narrative?: NamedNarrative,
): { summary: Summary; caution: Caution } {
  const summary = summarize(evidence, scope);
  const c = caution(evidence, summary, normative, scope, narrative);
  if (normative < NORMATIVE_THRESHOLD) return { summary, caution: c };
  return {
    summary: {
      ...summary,
      lean_confidence: round(summary.lean_confidence * (1 - normative)),
      text: `Needs human review: ${summary.text}`,
    },
    caution: c,
  };
}
