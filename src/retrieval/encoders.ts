/**
 * Which encoder builds which vector set, and how an abstract is embedded for it. "use": USE-lite over the title
 * and the lead of the abstract (USE-lite's cost grows with length; the lead carries the topic). "sif": SIF-weighted
 * word vectors over title and whole abstract (cheap, so everything is embedded). Only the encoders asked for are
 * opened, so an index without vectors never loads a model.
 */
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { sharedWordVectors } from "../encoders/word-vectors.ts";
import { TITLE_AND_ABSTRACT, titleAndLead } from "../index/embed-text.ts";
import type { VectorSpec } from "../index/ingest.ts";
import type { Manifest } from "../index/schema.ts";
import { tokenize } from "../text/tokenize.ts";
import type { QueryEncoder, WordSif } from "./retriever.ts";

/** Characters of title + lead embedded by USE-lite (see models/retrieval/CARD.md for the measurement). */
export const USE_LEAD_CHARS = 200;

/** Name of the SIF encoder, recorded in indexes (the word-vector package and the SIF weighting). */
export const SIF_ENCODER = "sif-wink-sg-100d@1";

export interface EncoderSet {
  specs: VectorSpec[];
  encoders: Record<string, QueryEncoder>;
  words?: WordSif;
  close(): Promise<void>;
}

export interface OpenEncodersOptions {
  /** Worker threads for USE-lite (ingest: 2; queries: 0, in-process, no thread hop per claim). */
  workers?: number;
  /** Only open the encoders of these vector sets. */
  only?: string[];
  /** USE-lite's disk cache of vectors (default on; benchmarks of cold claims turn it off). */
  cache?: boolean;
  /** An open USE-lite encoder to use instead of opening one (the caller keeps and closes it). */
  use?: SentenceEncoder;
}

/** Opens the default encoders: the vector specs for ingest and the query encoders for retrieval. */
export async function openEncoders(options: OpenEncodersOptions = {}): Promise<EncoderSet> {
  const want = (name: string) => !options.only || options.only.includes(name);
  const specs: VectorSpec[] = [];
  const encoders: Record<string, QueryEncoder> = {};
  const closers: SentenceEncoder[] = [];
  if (want("use")) {
    const use =
      options.use ??
      (await openUseLite({
        workers: options.workers,
        cacheDir: options.cache === false ? false : undefined,
      }));
    if (!options.use) closers.push(use);
    specs.push({ name: "use", encoder: use, recipe: titleAndLead(USE_LEAD_CHARS) });
    encoders.use = use;
  }
  let words: WordSif | undefined;
  if (want("sif")) {
    const wv = await sharedWordVectors();
    words = wv;
    const sif = {
      name: SIF_ENCODER,
      dim: wv.dim,
      embed: async (texts: string[]) => texts.map((t) => wv.sif(tokenize(t))),
    };
    specs.push({ name: "sif", encoder: sif, recipe: TITLE_AND_ABSTRACT });
    encoders.sif = sif;
  }
  return {
    specs,
    encoders,
    words,
    async close() {
      for (const c of closers) await c.close();
    },
  };
}

/**
 * Query encoders for the vector sets an index has (word vectors also serve the sentence-matching feature): in
 * this thread, unless the caller hands over a USE-lite encoder (a batch lane's worker pool).
 */
export async function openQueryEncoders(manifest: Manifest, use?: SentenceEncoder): Promise<EncoderSet> {
  return openEncoders({ workers: 0, only: Object.keys(manifest.vectors), use });
}
