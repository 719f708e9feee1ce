/**
 * The built-in offline Ev2R judge, an approximation of the paper's LLM atomic-fact judge: an abstract's atomic
 * facts are its sentences, and a fact is supported by a text when our verifier gives the pair (fact as the claim,
 * text as the abstract) P(Supports) >= SUPPORT_THRESHOLD. Calls made in the same tick go to the verifier as one
 * batch (backends batch their work).
 *
 * Chosen by measurement (BENCHMARKS.md, Ev2R section): on atomic statements against texts whose gold label says
 * whether they support them, the verifier's P(Supports) separates supported from unsupported better than the
 * best sentence similarity (USE-lite cosine), and a threshold tuned on train pairs for support F1 beats the
 * verifier's own label, which is tuned for three-way weighted F1 and calls Supports sparingly.
 */
import type { Verifier, VerifyPair } from "../../verification/verifier.ts";
import { abstractSentences } from "../../verification/verifier.ts";
import type { AbstractText, Judge } from "../ev2r.ts";

export const BUILTIN_JUDGE_VERSION = "sentences-v2";

/** P(Supports) from which a fact counts as supported: the support-F1 optimum on SciFact train pairs (0.29). */
export const SUPPORT_THRESHOLD = 0.3;

export const BUILTIN_APPROXIMATION = `built-in approximation: atomic facts = abstract sentences; a fact is supported when the verifier gives (fact, text) P(Supports) >= ${SUPPORT_THRESHOLD}`;

interface Pending {
  pairs: VerifyPair[];
  resolve: (flags: boolean[]) => void;
  reject: (e: unknown) => void;
}

export function builtinJudge(
  verifier: Pick<Verifier, "name" | "verifyPairs">,
  supportThreshold = SUPPORT_THRESHOLD,
): Judge {
  let queue: Pending[] = [];
  const flush = async () => {
    const batch = queue;
    queue = [];
    try {
      const verdicts = await verifier.verifyPairs(batch.flatMap((b) => b.pairs));
      let at = 0;
      for (const b of batch) {
        b.resolve(verdicts.slice(at, at + b.pairs.length).map((v) => v.probs.supports >= supportThreshold));
        at += b.pairs.length;
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  };
  return {
    name: `builtin-${BUILTIN_JUDGE_VERSION}${supportThreshold === SUPPORT_THRESHOLD ? "" : `@${supportThreshold}`}+${verifier.name}`,
    approximation: BUILTIN_APPROXIMATION,
    async atomicFacts(doc: AbstractText) {
      return abstractSentences(doc);
    },
    supported(facts, evidence) {
      if (facts.length === 0) return Promise.resolve([]);
      return new Promise<boolean[]>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ pairs: facts.map((claim) => ({ ...evidence, claim })), resolve, reject });
      });
    },
  };
}
