/**
 * Task 1 of a batch run, one chunk of claims at a time: the top k abstracts of each claim (retrieval), then a
 * verdict for each claim-abstract pair (verification). Each lane holds its own retriever and verifier.
 */
import { openUseLite } from "../encoders/sentence-encoder.ts";
import { openRetriever } from "../retrieval/load.ts";
import type { Claim, Label } from "../types.ts";
import { openBuiltinVerifier } from "../verification/builtin.ts";
import { openVerifier, type VerifierConfig } from "../verification/config.ts";
import type { Verifier, VerifyPair } from "../verification/verifier.ts";
import type { Lane } from "./batch.ts";

export interface Task1LaneOptions {
  index: string;
  k: number;
  verifier: VerifierConfig;
  /** Re-ranker file; null = stage 1 only; undefined = the shipped one when present. */
  reranker?: string | null;
}

/** One claim's answer: abstract ids in rank order with their labels. */
export type Task1Result = [abstractId: string, label: Label][];

/** A verifier for a lane: in a worker thread the built-in one embeds in-process (no nested encoder pool). */
async function laneVerifier(config: VerifierConfig, inWorker: boolean): Promise<Verifier> {
  if (config.backend !== "builtin" || !inWorker) return openVerifier(config);
  const encoder = await openUseLite({ workers: 0 });
  const verifier = await openBuiltinVerifier({ modelPath: config.model, encoder });
  return {
    ...verifier,
    async close() {
      await verifier.close();
      await encoder.close();
    },
  };
}

export async function openTask1Lane(
  o: Task1LaneOptions,
  where: { inWorker: boolean },
): Promise<Lane<Claim, Task1Result>> {
  const { retriever, close } = await openRetriever(o.index, { model: o.reranker });
  let verifier: Verifier;
  try {
    verifier = await laneVerifier(o.verifier, where.inWorker);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    async process(claims) {
      const stages = await retriever.stage1(claims.map((c) => c.text));
      const pairs: VerifyPair[] = [];
      const hits = stages.map((s, i) =>
        retriever.rank(s, o.k).map((h) => {
          const doc = retriever.index.docs.get(h.docno);
          pairs.push({
            claimId: claims[i].id,
            claim: claims[i].text,
            abstractId: doc.id,
            abstract: doc.abstract,
            title: doc.title,
            sentences: doc.sentences,
          });
          return doc.id;
        }),
      );
      const verdicts = await verifier.verifyPairs(pairs);
      let p = 0;
      return hits.map((ids) => ids.map((id): [string, Label] => [id, verdicts[p++].label]));
    },
    async close() {
      await verifier.close();
      await close();
    },
  };
}
