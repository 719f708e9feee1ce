/**
 * Task 1 of a batch run, one chunk of claims at a time: the top k abstracts of each claim (retrieval), then a
 * verdict for each claim-abstract pair (verification). Each lane holds its own retriever and verifier.
 */
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import type { RetrievalConfig } from "../retrieval/byo.ts";
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
  /** A profile's retrieval section (its own ONNX models); default: the built-in retrieval. */
  retrieval?: RetrievalConfig;
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
 * A lane's USE-lite worker pool, for an in-process lane with the built-in verifier and `encoderWorkers` set; in a
 * worker thread encoding stays in-process (no nested pool).
 */
async function lanePool(o: Task1LaneOptions, inWorker: boolean): Promise<SentenceEncoder | undefined> {
  const workers = inWorker || o.verifier.backend !== "builtin" ? 0 : (o.encoderWorkers ?? 0);
  // An explicit worker count, not the encoder's "pool only for big calls" default: a chunk's claims are a small
  // call, which that default would encode on this thread, leaving the second core idle.
  return workers > 0 ? openUseLite({ workers }) : undefined;
}

/** The built-in verifier shares the lane's pool, and opens an encoder only if its model needs one. */
function laneVerifier(o: Task1LaneOptions, pool: SentenceEncoder | undefined): Promise<Verifier> {
  const config = o.verifier;
  if (config.backend !== "builtin") return openVerifier(config);
  return openBuiltinVerifier({ modelPath: config.model, encoder: pool ?? (() => openUseLite()) });
}

export async function openTask1Lane(
  o: Task1LaneOptions,
  where: { inWorker: boolean },
): Promise<Lane<Claim, Task1Result>> {
  const pool = await lanePool(o, where.inWorker);
  let opened: Awaited<ReturnType<typeof openRetriever>> | undefined;
  let verifier: Verifier;
  try {
    // The pool is the retriever's claim encoder: one chunk's claims are encoded off this thread while another
    // chunk is retrieved on it.
    opened = await openRetriever(o.index, { model: o.reranker, useEncoder: pool, retrieval: o.retrieval });
    verifier = await laneVerifier(o, pool);
  } catch (e) {
    await opened?.close();
    await pool?.close();
    throw e;
  }
  const { retriever, close } = opened;
  return {
    concurrency: pool ? POOLED_LANE_CONCURRENCY : 1,
    async process(claims) {
      const ranked = await retriever.rankAll(await retriever.stage1(claims.map((c) => c.text)), o.k);
      const pairs: VerifyPair[] = [];
      const hits = ranked.map((found, i) =>
        found.map((h) => {
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
      await pool?.close();
    },
  };
}
