/**
 * Which encoder builds which vector set, and how an abstract is embedded for it. "use": USE-lite over the title
 * and the lead of the abstract (USE-lite's cost grows with length; the lead carries the topic). Opened lazily,
 * so an index without vectors never loads a model.
 */
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { titleAndLead } from "../index/embed-text.ts";
import type { VectorSpec } from "../index/ingest.ts";
import type { Manifest } from "../index/schema.ts";
import type { QueryEncoder, WordSif } from "./retriever.ts";

/** Characters of title + lead embedded by USE-lite (see models/retrieval/CARD.md for the measurement). */
export const USE_LEAD_CHARS = 200;

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
}

/** Opens the default encoders: the vector specs for ingest and the query encoders for retrieval. */
export async function openEncoders(options: OpenEncodersOptions = {}): Promise<EncoderSet> {
  const want = (name: string) => !options.only || options.only.includes(name);
  const specs: VectorSpec[] = [];
  const encoders: Record<string, QueryEncoder> = {};
  const closers: SentenceEncoder[] = [];
  if (want("use")) {
    const use = await openUseLite({ workers: options.workers });
    closers.push(use);
    specs.push({ name: "use", encoder: use, recipe: titleAndLead(USE_LEAD_CHARS) });
    encoders.use = use;
  }
  return {
    specs,
    encoders,
    async close() {
      for (const c of closers) await c.close();
    },
  };
}

/** Query encoders for the vector sets an index has. */
export async function openQueryEncoders(manifest: Manifest): Promise<EncoderSet> {
  return openEncoders({ workers: 0, only: Object.keys(manifest.vectors) });
}
