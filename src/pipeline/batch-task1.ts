/**
 * Task 1 of a batch run, one chunk of claims at a time: the top k abstracts of each claim (retrieval), then a
 * verdict for each claim-abstract pair (verification). Each lane holds its own retriever and verifier.
 */
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
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
  /**
   * In-process lane with the built-in verifier: USE-lite worker threads for all sentence encoding (default 0 =
   * in this thread). predict sets 2 for runs long enough to repay starting them.
   */
  encoderWorkers?: number;
}

/** Chunks an in-process lane with an encoder pool works on at once: one is retrieved while another is encoded. */
export const POOLED_LANE_CONCURRENCY = 3;

/** One claim's answer: abstract ids in rank order with their labels. */
export type Task1Result = [abstractId: string, label: Label][];

/**
 * A lane's verifier, and its encoder when the lane should route claims through it. In a worker thread the
 * built-in one embeds in-process (no nested encoder pool).
 */
async function laneVerifier(
  o: Task1LaneOptions,
  inWorker: boolean,
): Promise<{ verifier: Verifier; pool?: SentenceEncoder }> {
  const config = o.verifier;
  if (config.backend !== "builtin") return { verifier: await openVerifier(config) };
  const workers = inWorker ? 0 : (o.encoderWorkers ?? 0);
  // An explicit worker count, not the encoder's "pool only for big calls" default: after the cascade a chunk
  // leaves a few dozen sentences, which that default would encode on this thread, leaving the second core idle.
  const encoder = await openUseLite({ workers });
  try {
    const verifier = await openBuiltinVerifier({ modelPath: config.model, encoder });
    return {
      verifier: {
        ...verifier,
        async close() {
          await verifier.close();
          await encoder.close();
        },
      },
      pool: workers > 0 ? encoder : undefined,
    };
  } catch (e) {
    await encoder.close();
    throw e;
  }
}

export async function openTask1Lane(
  o: Task1LaneOptions,
  where: { inWorker: boolean },
): Promise<Lane<Claim, Task1Result>> {
  const { retriever, close } = await openRetriever(o.index, { model: o.reranker });
  let lane: Awaited<ReturnType<typeof laneVerifier>>;
  try {
    lane = await laneVerifier(o, where.inWorker);
  } catch (e) {
    await close();
    throw e;
  }
  const { verifier, pool } = lane;
  return {
    concurrency: pool ? POOLED_LANE_CONCURRENCY : 1,
    async process(claims) {
      // Claims through the pool first: the retriever's own encoder (in this thread) then finds them in the
      // shared vector cache instead of running the model here.
      if (pool) await pool.embed(claims.map((c) => c.text));
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
