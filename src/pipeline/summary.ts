/**
 * From per-abstract verdicts to what a reader sees first: the lean of the evidence and whether a person should
 * review it. Pure functions, so the rules are tested directly and read in one place.
 *
 * Caution is narrative-aware: the ClimateCheck 2026 analysis found claims of CARDS groups 4 ("solutions won't
 * work") and 5 ("climate science is unreliable") to be normative or epistemological, so abstracts rarely settle
 * them. For such claims we say so and ask for review instead of showing a confident verdict.
 */
import type { Caution, Evidence, Lean, Summary } from "./result.ts";

/** P(group 4) + P(group 5) at or above this (more likely than not) makes a claim normative for the caution. */
export const NORMATIVE_THRESHOLD = 0.5;
/** One side must hold this share of the decisive confidence mass for a lean; below it the evidence is mixed. */
export const LEAN_SHARE = 0.75;
/** A lone decisive abstract below this confidence is thin evidence. */
export const THIN_CONFIDENCE = 0.6;

const round = (x: number) => Math.round(x * 1000) / 1000;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Counts per label; the lean weighs decisive verdicts (Supports, Refutes) by confidence: a side holding at least
 * LEAN_SHARE of the mass wins, otherwise "mixed"; no decisive verdict is "insufficient". lean_confidence is the
 * winning side's share times its mean confidence (mixed: the minority's share; insufficient: 0).
 */
export function summarize(evidence: readonly Evidence[]): Summary {
  let supports = 0;
  let refutes = 0;
  let s = 0;
  let r = 0;
  for (const e of evidence) {
    if (e.label === "Supports") {
      supports++;
      s += e.confidence;
    } else if (e.label === "Refutes") {
      refutes++;
      r += e.confidence;
    }
  }
  const nei = evidence.length - supports - refutes;
  let lean: Lean;
  let confidence: number;
  if (supports + refutes === 0) {
    lean = "insufficient";
    confidence = 0;
  } else if (s / (s + r) >= LEAN_SHARE) {
    lean = "supports";
    confidence = (s / (s + r)) * (s / supports);
  } else if (r / (s + r) >= LEAN_SHARE) {
    lean = "refutes";
    confidence = (r / (s + r)) * (r / refutes);
  } else {
    lean = "mixed";
    confidence = Math.min(s, r) / (s + r);
  }
  const counts = `Of ${plural(evidence.length, "abstract", "abstracts")}, ${supports} ${supports === 1 ? "supports" : "support"} the claim, ${refutes} ${refutes === 1 ? "refutes" : "refute"} it and ${nei} ${nei === 1 ? "does" : "do"} not say enough.`;
  const verdict: Record<Lean, string> = {
    supports: "The evidence leans towards supporting the claim.",
    refutes: "The evidence leans towards refuting the claim.",
    mixed: "The evidence is mixed.",
    insufficient: "The abstracts found do not settle the claim.",
  };
  return {
    supports,
    refutes,
    nei,
    lean,
    lean_confidence: round(confidence),
    text: evidence.length === 0 ? "No abstract was found for this claim." : `${counts} ${verdict[lean]}`,
  };
}

/**
 * Whether a person should review the verdict, and why: a normative or epistemological claim (groups 4/5 with
 * probability `normative` >= NORMATIVE_THRESHOLD), no decisive abstract, a lone weak one, or disagreement.
 */
export function caution(evidence: readonly Evidence[], summary: Summary, normative: number): Caution {
  const reasons: string[] = [];
  if (normative >= NORMATIVE_THRESHOLD) {
    reasons.push(
      `This claim looks normative or epistemological (a "solutions won't work" or "science is unreliable" narrative, probability ${normative.toFixed(2)}): scientific abstracts rarely settle such claims, so treat the verdict as unconfirmed.`,
    );
  }
  const decisive = evidence.filter((e) => e.label !== "Not Enough Information");
  if (evidence.length === 0) reasons.push("No abstract was found for this claim.");
  else if (decisive.length === 0)
    reasons.push("None of the abstracts found supports or refutes the claim: the evidence is thin.");
  else if (decisive.length === 1 && decisive[0].confidence < THIN_CONFIDENCE)
    reasons.push("Only one abstract takes a side, and with low confidence: the evidence is thin.");
  else if (summary.lean === "mixed") reasons.push("The abstracts disagree with each other.");
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
): { summary: Summary; caution: Caution } {
  const summary = summarize(evidence);
  const c = caution(evidence, summary, normative);
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
