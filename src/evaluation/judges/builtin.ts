/**
 * The built-in offline Ev2R judge, an approximation of the paper's LLM atomic-fact judge: an abstract's atomic
 * facts are its sentences, and a fact is supported by a text when our verifier labels the pair (fact as the
 * claim, text as the abstract) Supports. Calls made in the same tick are sent to the verifier as one batch,
 * because the built-in verifier embeds sentences in batches.
 */
import type { Verifier, VerifyPair } from "../../verification/verifier.ts";
import { abstractSentences } from "../../verification/verifier.ts";
import type { AbstractText, Judge } from "../ev2r.ts";

export const BUILTIN_JUDGE_VERSION = "sentences-v1";

export const BUILTIN_APPROXIMATION =
  "built-in approximation: atomic facts = abstract sentences; a fact is supported when the verifier labels (fact, text) Supports";

interface Pending {
  pairs: VerifyPair[];
  resolve: (flags: boolean[]) => void;
  reject: (e: unknown) => void;
}

export function builtinJudge(verifier: Pick<Verifier, "name" | "verifyPairs">): Judge {
  let queue: Pending[] = [];
  const flush = async () => {
    const batch = queue;
    queue = [];
    try {
      const verdicts = await verifier.verifyPairs(batch.flatMap((b) => b.pairs));
      let at = 0;
      for (const b of batch) {
        b.resolve(verdicts.slice(at, at + b.pairs.length).map((v) => v.label === "Supports"));
        at += b.pairs.length;
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  };
  return {
    name: `builtin-${BUILTIN_JUDGE_VERSION}+${verifier.name}`,
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
