/**
 * The ONNX models a user can bring to retrieval, from local folders (src/encoders/onnx-folder.ts): a sentence
 * embedder for a dense candidate list (e5, bge, MiniLM exports: last_hidden_state pooled by mean or CLS, optionally
 * L2-normalised, with query/passage prefixes such as e5's "query: "/"passage: ") and cross-encoders that score
 * (claim, abstract) pairs (MiniLM, bge-reranker: one logit per pair).
 */
import { DataError } from "../data/errors.ts";
import { byLength, type OnnxDtype, type OnnxTensor, openOnnxFolder } from "../encoders/onnx-folder.ts";
import { normalizeInPlace } from "../encoders/vector.ts";

export interface OnnxEmbedderOptions {
  modelDir: string;
  pooling?: "mean" | "cls";
  /** L2-normalise the vectors (default true: the index scores by dot product, so cosine needs unit vectors). */
  normalize?: boolean;
  /** Put before each claim / each abstract, e.g. "query: " and "passage: " for e5. */
  queryPrefix?: string;
  passagePrefix?: string;
  /** Tokens per text; longer texts are truncated. Default 512. */
  maxLength?: number;
  /** Texts per model call. Default 32. */
  batchSize?: number;
  dtype?: OnnxDtype;
}

export interface OnnxEmbedder {
  /** Recorded in the index manifest, e.g. "onnx:e5-large-v2/mean+norm/512"; queries must use the same one. */
  readonly name: string;
  readonly dim: number;
  /** Vectors of raw texts (no prefix), in input order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  readonly queryPrefix: string;
  readonly passagePrefix: string;
  close(): Promise<void>;
}

const STAGE = "retrieval (dense)";

/** One pooled vector per row of a [batch, seq, dim] tensor, over the tokens the mask keeps. */
export function pool(
  hidden: OnnxTensor,
  mask: ArrayLike<bigint | number>,
  pooling: "mean" | "cls",
  normalize: boolean,
): Float32Array[] {
  const [batch, seq, dim] = hidden.dims;
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const v = new Float32Array(dim);
    if (pooling === "cls") v.set(hidden.data.subarray(b * seq * dim, b * seq * dim + dim));
    else {
      let n = 0;
      for (let t = 0; t < seq; t++) {
        if (!Number(mask[b * seq + t])) continue;
        n++;
        const base = (b * seq + t) * dim;
        for (let j = 0; j < dim; j++) v[j] += hidden.data[base + j];
      }
      if (n > 0) for (let j = 0; j < dim; j++) v[j] /= n;
    }
    out.push(normalize ? normalizeInPlace(v) : v);
  }
  return out;
}

export async function openOnnxEmbedder(options: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
  const { pooling = "mean", normalize = true, maxLength = 512, batchSize = 32, dtype = "fp32" } = options;
  const { dir, label, tokenizer, model } = await openOnnxFolder(options.modelDir, STAGE, "AutoModel", dtype);
  const run = async (texts: string[]): Promise<Float32Array[]> => {
    const encoded = tokenizer(texts, { padding: true, truncation: true, max_length: maxLength }) as {
      attention_mask: { data: ArrayLike<bigint | number> };
    };
    const out = await model(encoded);
    const hidden = out.last_hidden_state;
    if (hidden?.dims.length !== 3 || hidden.dims[0] !== texts.length) {
      const got = Object.entries(out)
        .map(([k, t]) => `${k} [${t?.dims?.join(", ")}]`)
        .join(", ");
      throw new DataError(
        dir,
        `${STAGE}: expected an embedding model with output last_hidden_state [batch, seq, dim], the model gives ${got || "nothing"}`,
      );
    }
    return pool(hidden, encoded.attention_mask.data, pooling, normalize);
  };
  let probe: Float32Array[];
  try {
    // One text tells the width and checks the output shape before any document is embedded.
    probe = await run(["probe"]);
  } catch (e) {
    await model.dispose();
    throw e;
  }
  const dim = probe[0].length;
  return {
    name: `onnx:${label}/${pooling}${normalize ? "+norm" : ""}/${maxLength}`,
    dim,
    queryPrefix: options.queryPrefix ?? "",
    passagePrefix: options.passagePrefix ?? "",
    async embed(texts) {
      const order = byLength(texts);
      const out: Float32Array[] = new Array(texts.length);
      for (let start = 0; start < order.length; start += batchSize) {
        const batch = order.slice(start, start + batchSize);
        const vectors = await run(batch.map((i) => texts[i]));
        batch.forEach((i, r) => {
          out[i] = vectors[r];
        });
      }
      return out;
    },
    close: async () => {
      await model.dispose();
    },
  };
}

export interface CrossEncoderOptions {
  modelDir: string;
  /** Tokens per (claim, abstract) pair. Default 512. */
  maxLength?: number;
  /** Pairs per model call. Default 16. */
  batchSize?: number;
  dtype?: OnnxDtype;
}

/** Scores (query, passage) pairs: higher is more relevant. */
export interface PairScorer {
  readonly name: string;
  score(query: string, passages: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

export async function openCrossEncoder(options: CrossEncoderOptions): Promise<PairScorer> {
  const { maxLength = 512, batchSize = 16, dtype = "fp32" } = options;
  const stage = "retrieval (re-ranking)";
  const { dir, label, tokenizer, model } = await openOnnxFolder(
    options.modelDir,
    stage,
    "AutoModelForSequenceClassification",
    dtype,
  );
  const run = async (query: string, passages: string[]): Promise<number[]> => {
    const encoded = tokenizer(
      passages.map(() => query),
      { text_pair: passages, padding: true, truncation: true, max_length: maxLength },
    );
    const { logits } = await model(encoded);
    if (logits?.dims.length !== 2 || logits.dims[0] !== passages.length || logits.dims[1] !== 1)
      throw new DataError(
        dir,
        `${stage}: expected a cross-encoder with output logits [batch, 1], the model gives ${logits ? `logits [${logits.dims.join(", ")}]` : "no logits"}`,
      );
    return Array.from(logits.data.subarray(0, passages.length));
  };
  try {
    await run("probe", ["probe"]);
  } catch (e) {
    await model.dispose();
    throw e;
  }
  return {
    name: `onnx:${label}`,
    async score(query, passages) {
      const order = byLength(passages);
      const out: number[] = new Array(passages.length);
      for (let start = 0; start < order.length; start += batchSize) {
        const batch = order.slice(start, start + batchSize);
        const scores = await run(
          query,
          batch.map((i) => passages[i]),
        );
        batch.forEach((i, r) => {
          out[i] = scores[r];
        });
      }
      return out;
    },
    close: async () => {
      await model.dispose();
    },
  };
}
