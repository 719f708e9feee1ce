/**
 * The one interface of claim verification (task 1.2). Every backend (the built-in trained verifier, an ONNX NLI
 * cross-encoder, an OpenAI-compatible chat model) takes claim-abstract pairs and returns a label, probabilities
 * and the indices of the abstract sentences that justify the label. Sentence indices always refer to
 * `abstractSentences(pair)`, so every backend's rationale means the same thing.
 */
import { argmax } from "../learning/decision-weights.ts";
import { splitSentences } from "../text/sentences.ts";
import { LABELS, type Label, NEI } from "../types.ts";

export interface VerifyPair {
  claimId?: string;
  claim: string;
  abstractId?: string;
  abstract: string;
  title?: string;
  /** Sentence boundaries when known (SciFact); otherwise the abstract is split with src/text/sentences.ts. */
  sentences?: string[];
}

export interface LabelProbs {
  supports: number;
  refutes: number;
  nei: number;
}

export interface Verdict {
  label: Label;
  /** Probability of the chosen label. */
  confidence: number;
  probs: LabelProbs;
  /** Indices into abstractSentences(pair) of the sentences that justify the label (empty for NEI). */
  rationale: number[];
}

export interface Verifier {
  /** Backend and model, e.g. "builtin:v4" or "openai:llama3.1:8b". */
  readonly name: string;
  /** Verdicts in input order; backends batch and parallelise internally. */
  verifyPairs(pairs: readonly VerifyPair[]): Promise<Verdict[]>;
  verify(claim: string, abstract: Omit<VerifyPair, "claim">): Promise<Verdict>;
  close(): Promise<void>;
}

/** A Verifier from its batch function (verify is one pair of it). */
export function makeVerifier(
  name: string,
  verifyPairs: (pairs: readonly VerifyPair[]) => Promise<Verdict[]>,
  close: () => Promise<void> = async () => {},
): Verifier {
  return {
    name,
    verifyPairs,
    async verify(claim, abstract) {
      const [verdict] = await verifyPairs([{ ...abstract, claim }]);
      return verdict;
    },
    close,
  };
}

export function abstractSentences(pair: Pick<VerifyPair, "abstract" | "sentences">): string[] {
  if (pair.sentences && pair.sentences.length > 0) return pair.sentences;
  const split = splitSentences(pair.abstract);
  return split.length > 0 ? split : [pair.abstract];
}

/** Probabilities in LABELS order (Supports, Refutes, NEI). */
export function probsToArray(p: LabelProbs): [number, number, number] {
  return [p.supports, p.refutes, p.nei];
}

export function probsFromArray(p: ArrayLike<number>): LabelProbs {
  return { supports: p[0], refutes: p[1], nei: p[2] };
}

/**
 * The label decision, always the most probable class of the probabilities returned: a Supports or Refutes on top
 * whose probability is below `minConfidence` is weak evidence (calling it Supports is the shared task's most common
 * error), so its mass is folded into NEI, which then is the top class. The probabilities shown are the returned ones.
 */
export function decide(
  probs: LabelProbs,
  minConfidence = 0,
): { label: Label; confidence: number; probs: LabelProbs } {
  const p = probsToArray(probs);
  const best = argmax(p);
  if (LABELS[best] !== NEI && p[best] < minConfidence) {
    p[2] += p[best];
    p[best] = 0;
  }
  const k = argmax(p);
  return { label: LABELS[k], confidence: p[k], probs: probsFromArray(p) };
}

/** Whether a verdict tells one story: its label is the most probable class it shows, with that probability. */
export function agreesWithProbs(v: Pick<Verdict, "label" | "confidence" | "probs">): boolean {
  const p = probsToArray(v.probs);
  const k = LABELS.indexOf(v.label);
  return p.every((x) => x <= p[k]) && Math.abs(v.confidence - p[k]) < 1e-9;
}
