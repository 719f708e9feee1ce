/**
 * Sentence encoders: text -> L2-normalised vector. USE-lite (512-d) is the one we ship. A call is de-duplicated,
 * served from the disk cache where it can, and the rest is sorted by length into batches (the graph pads each
 * batch to its longest text), cut to the 128 tokens the model reads, and spread over worker threads.
 */
import { join } from "node:path";
import { cacheDir } from "../data/paths.ts";
import { sharedUseLiteModel, USE_LITE_DIM, USE_LITE_NAME } from "./use-lite-model.ts";
import { cacheKey, openVectorCache, type VectorCache } from "./vector-cache.ts";
import { type BatchEmbedder, startUseLitePool } from "./worker-pool.ts";

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
  /** Texts per model call (default 32: measured CPU per text within ~15% from 8 to 64, lowest near 32). */
  batchSize?: number;
  /** Distinct texts of the current call done so far (cache hits count at once). */
  onProgress?: (done: number, total: number) => void;
}

/** Counters since the encoder was opened (for tests, logs and benchmarks). */
export interface EncoderStats {
  /** Texts the model actually embedded (after de-duplication and cache hits). */
  modelTexts: number;
  modelBatches: number;
  cacheHits: number;
}

export interface UseLiteEncoder extends SentenceEncoder {
  readonly stats: Readonly<EncoderStats>;
}

const DEFAULT_BATCH = 32;
const DEFAULT_WORKERS = 2;
/** Below this many texts to embed, starting workers (about a second each) costs more than it saves. */
const POOL_MIN_TEXTS = 48;

/**
 * Largest size of the vector cache file (vector-cache.ts: one more generation is kept beside it):
 * $CLIMATECHECK_VECTOR_CACHE_MB as bytes; undefined (256 MiB) when unset (an unusable value is an error, not ignored).
 */
function envCacheMaxBytes(): number | undefined {
  const v = process.env.CLIMATECHECK_VECTOR_CACHE_MB;
  if (v === undefined || v === "") return undefined;
  const mb = Number(v);
  if (!(mb > 0))
    throw new Error(`CLIMATECHECK_VECTOR_CACHE_MB must be a positive number of megabytes, got "${v}"`);
  return Math.floor(mb * 1024 * 1024);
}

function inProcess(): BatchEmbedder & { ready: Promise<unknown> } {
  const model = sharedUseLiteModel();
  return {
    ready: model,
    embedBatch: async (texts) => (await model).embedBatch(texts),
    async close() {},
  };
}

export async function openUseLite(options: UseLiteOptions = {}): Promise<UseLiteEncoder> {
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH));
  const workers = Math.max(0, Math.floor(options.workers ?? DEFAULT_WORKERS));
  const auto = options.workers === undefined;
  const cache: VectorCache | undefined =
    options.cacheDir === false
      ? undefined
      : openVectorCache(options.cacheDir ?? join(cacheDir(), "use-lite"), USE_LITE_NAME, USE_LITE_DIM, {
          maxBytes: envCacheMaxBytes(),
        });
  const stats: EncoderStats = { modelTexts: 0, modelBatches: 0, cacheHits: 0 };
  // Models load lazily: a call served wholly from the cache never loads one.
  let local: ReturnType<typeof inProcess> | undefined;
  let pool: Promise<BatchEmbedder> | undefined;

  function backend(count: number): Promise<BatchEmbedder> {
    if (workers > 0 && (pool || !auto || count >= POOL_MIN_TEXTS)) {
      pool ??= startUseLitePool(workers);
      return pool;
    }
    local ??= inProcess();
    const l = local;
    return l.ready.then(() => l);
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
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
    const vectors: Float32Array[] = new Array(unique.length);
    const keys = cache ? unique.map((t) => cacheKey(USE_LITE_NAME, t)) : [];
    let missing = unique.map((_, i) => i);
    if (cache) {
      const found = cache.getMany(keys);
      missing = [];
      found.forEach((v, i) => {
        if (v) vectors[i] = v;
        else missing.push(i);
      });
      stats.cacheHits += unique.length - missing.length;
    }
    let done = unique.length - missing.length;
    options.onProgress?.(done, unique.length);
    if (missing.length > 0) {
      const embedder = await backend(missing.length);
      // Longest first: similar lengths share a batch, and the big batches start early so workers finish together.
      missing.sort((a, b) => unique[b].length - unique[a].length);
      const batches: number[][] = [];
      for (let s = 0; s < missing.length; s += batchSize) batches.push(missing.slice(s, s + batchSize));
      await Promise.all(
        batches.map(async (ids) => {
          const flat = await embedder.embedBatch(ids.map((i) => unique[i]));
          ids.forEach((id, k) => {
            vectors[id] = flat.slice(k * USE_LITE_DIM, (k + 1) * USE_LITE_DIM);
          });
          cache?.putMany(ids.map((id) => ({ key: keys[id], vector: vectors[id] })));
          stats.modelTexts += ids.length;
          stats.modelBatches++;
          done += ids.length;
          options.onProgress?.(done, unique.length);
        }),
      );
    }
    return where.map((i) => vectors[i]);
  }

  return {
    name: USE_LITE_NAME,
    dim: USE_LITE_DIM,
    stats,
    embed,
    async close() {
      const p = pool;
      pool = undefined;
      local = undefined;
      cache?.close();
      if (p) await (await p).close();
    },
  };
}
