/** Opens an index with its query encoders and the shipped re-ranker: the one way the CLI and server retrieve. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { isBuiltinOnly } from "../data/builtin-corpus.ts";
import { MODELS_DIR } from "../data/paths.ts";
import type { SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { openIndex } from "../index/open.ts";
import { checkDenseIndex, openByoRetrieval, type RetrievalConfig } from "./byo.ts";
import { openQueryEncoders } from "./encoders.ts";
import { Reranker } from "./reranker.ts";
import { Retriever } from "./retriever.ts";

export const RERANKER_PATH = join(MODELS_DIR, "retrieval", "reranker.json");

export interface LoadOptions {
  /**
   * Re-ranker file; null = no re-ranking (stage 1 only; with a profile, its cross-encoders are left out). Default: the
   * shipped model when present.
   */
  model?: string | null;
  /** An open USE-lite encoder for the claims (not closed with the retriever); default: one in this thread. */
  useEncoder?: SentenceEncoder;
  /** A profile's retrieval section: its own ONNX models instead of the built-in encoders and re-ranker. */
  retrieval?: RetrievalConfig;
}

export async function openRetriever(
  dir: string,
  options: LoadOptions = {},
): Promise<{ retriever: Retriever; close(): Promise<void> }> {
  const index = openIndex(dir);
  if (options.retrieval && options.retrieval.backend !== "builtin") {
    let byo: Awaited<ReturnType<typeof openByoRetrieval>> | undefined;
    try {
      // No re-ranking asked for (--no-rerank, --fast): the profile's stage 1 alone, its cross-encoders not loaded.
      byo = await openByoRetrieval(options.retrieval, options.model === null);
      checkDenseIndex(index.dir, index.manifest, byo);
    } catch (e) {
      index.close();
      await byo?.close();
      throw e;
    }
    const b = byo;
    const retriever = new Retriever(index, {
      encoders: b.encoders,
      fusionRule: b.fusionRule,
      crossEncoders: b.crossEncoders,
      depth: { bm25: b.bm25Depth ?? index.manifest.bm25?.depth ?? 1000, dense: b.denseDepth },
    });
    return {
      retriever,
      async close() {
        index.close();
        await b.close();
      },
    };
  }
  const enc = await openQueryEncoders(index.manifest, options.useEncoder);
  const path =
    options.model === undefined ? (existsSync(RERANKER_PATH) ? RERANKER_PATH : undefined) : options.model;
  const reranker = path ? Reranker.load(path).forCorpus(isBuiltinOnly(index.manifest.sources)) : undefined;
  const retriever = new Retriever(index, { encoders: enc.encoders, words: enc.words, reranker });
  return {
    retriever,
    async close() {
      index.close();
      await enc.close();
    },
  };
}
