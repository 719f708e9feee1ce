/**
 * Sentence encoders: text -> L2-normalised vector. USE-lite (512-d) is the one we ship; calls are de-duplicated,
 * length-sorted into batches (the graph pads each batch to its longest text) and cut to the 128 tokens it reads.
 */
import { loadUseLiteModel, USE_LITE_DIM, USE_LITE_NAME, type UseLiteModel } from "./use-lite-model.ts";

export interface SentenceEncoder {
  /** Model id recorded in indexes and model cards, e.g. "use-lite@0.2.0". */
  readonly name: string;
  readonly dim: number;
  /** L2-normalised vectors, in the order of texts. */
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export interface UseLiteOptions {
  /** Worker threads, each with its own model; 0 = in-process. Default: 2 for big calls, in-process for small ones. */
  workers?: number;
  /** Vector cache folder; false = no cache. Default: cacheDir()/use-lite. */
  cacheDir?: string | false;
  /** Texts per model call. */
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
}

const DEFAULT_BATCH = 64;

export async function openUseLite(options: UseLiteOptions = {}): Promise<SentenceEncoder> {
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH);
  let model: Promise<UseLiteModel> | undefined;
  const local = () => {
    model ??= loadUseLiteModel();
    return model;
  };
  await local();

  async function embed(texts: string[]): Promise<Float32Array[]> {
    // De-duplicate, then sort the distinct texts by length so each batch pads little.
    const slot = new Map<string, number>();
    const unique: string[] = [];
    const where = texts.map((t) => {
      let i = slot.get(t);
      if (i === undefined) {
        i = unique.length;
        slot.set(t, i);
        unique.push(t);
      }
      return i;
    });
    const order = unique.map((_, i) => i).sort((a, b) => unique[a].length - unique[b].length);
    const vectors: Float32Array[] = new Array(unique.length);
    const m = await local();
    let done = 0;
    for (let s = 0; s < order.length; s += batchSize) {
      const ids = order.slice(s, s + batchSize);
      const flat = await m.embedBatch(ids.map((i) => unique[i]));
      ids.forEach((id, k) => {
        vectors[id] = flat.slice(k * USE_LITE_DIM, (k + 1) * USE_LITE_DIM);
      });
      done += ids.length;
      options.onProgress?.(done, unique.length);
    }
    return where.map((i) => vectors[i]);
  }

  return {
    name: USE_LITE_NAME,
    dim: USE_LITE_DIM,
    embed,
    async close() {},
  };
}
