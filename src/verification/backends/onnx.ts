/**
 * Verifier backend on an NLI cross-encoder exported to ONNX (e.g. a DeBERTa-v3 MNLI model), run on the CPU with
 * `@huggingface/transformers` (onnxruntime-node) from a local folder only: remote loading is off, nothing is ever
 * downloaded. The folder holds config.json (with id2label), tokenizer.json, tokenizer_config.json and the ONNX file
 * in onnx/ (transformers.js layout) or at the top (Optimum layout).
 */
import { join } from "node:path";
import { DataError } from "../../data/errors.ts";
import { type OnnxDtype, openOnnxFolder } from "../../encoders/onnx-folder.ts";
import {
  abstractSentences,
  decide,
  type LabelProbs,
  makeVerifier,
  type Verdict,
  type Verifier,
  type VerifyPair,
} from "../verifier.ts";
import { aggregateSentences, classProbs, type LabelMap, resolveLabelMap } from "./onnx-labels.ts";

export interface OnnxVerifierOptions {
  /** Folder of the exported model. */
  modelDir: string;
  /** Model class → label; default from config.json id2label with the usual MNLI names. */
  labelMap?: LabelMap;
  /** Tokens per (premise, hypothesis) input; longer inputs are truncated. Default 512. */
  maxLength?: number;
  /** Inputs per model call. Default 16. */
  batchSize?: number;
  /** Score each abstract sentence (default) or the whole abstract as one premise (then no rationale). */
  sentenceLevel?: boolean;
  /** Which ONNX file: fp32 = model.onnx, q8 = model_quantized.onnx, ... Default fp32. */
  dtype?: OnnxDtype;
  /** Supports/Refutes below this probability become NEI. Default 0. */
  minConfidence?: number;
}

export async function openOnnxVerifier(options: OnnxVerifierOptions): Promise<Verifier> {
  const {
    maxLength = 512,
    batchSize = 16,
    sentenceLevel = true,
    dtype = "fp32",
    minConfidence = 0,
  } = options;
  const { tokenizer, model, dir, label } = await openOnnxFolder(
    options.modelDir,
    "verification (onnx)",
    "AutoModelForSequenceClassification",
    dtype,
  );
  const id2label = (model.config as { id2label?: Record<string, string> }).id2label ?? {};
  let targets: ReturnType<typeof resolveLabelMap>;
  try {
    targets = resolveLabelMap(id2label, options.labelMap);
  } catch (e) {
    await model.dispose();
    throw new DataError(join(dir, "config.json"), (e as Error).message, { field: "id2label" });
  }

  /** Label probabilities of (premise, hypothesis) inputs, batched; shorter premises first to pad less. */
  const score = async (inputs: { premise: string; hypothesis: string }[]): Promise<LabelProbs[]> => {
    const order = inputs.map((_, i) => i).sort((a, b) => inputs[a].premise.length - inputs[b].premise.length);
    const out: LabelProbs[] = new Array(inputs.length);
    for (let start = 0; start < order.length; start += batchSize) {
      const batch = order.slice(start, start + batchSize);
      const encoded = tokenizer(
        batch.map((i) => inputs[i].premise),
        {
          text_pair: batch.map((i) => inputs[i].hypothesis),
          padding: true,
          truncation: true,
          max_length: maxLength,
        },
      );
      const { logits } = await model(encoded);
      const classes = logits?.dims[1];
      if (logits?.dims.length !== 2 || classes !== targets.length)
        throw new DataError(
          dir,
          `verification (onnx): expected an NLI model with output logits [batch, ${targets.length}] (the classes config.json names), the model gives ${logits ? `logits [${logits.dims.join(", ")}]` : "no logits"}`,
        );
      batch.forEach((i, row) => {
        out[i] = classProbs(logits.data.subarray(row * classes, (row + 1) * classes), targets);
      });
    }
    return out;
  };

  const verifyPairs = async (pairs: readonly VerifyPair[]): Promise<Verdict[]> => {
    if (pairs.length === 0) return [];
    const sentences = pairs.map((p) => abstractSentences(p));
    if (!sentenceLevel) {
      const probs = await score(
        pairs.map((p, i) => ({ premise: sentences[i].join(" "), hypothesis: p.claim })),
      );
      return probs.map((p) => ({ ...decide(p, minConfidence), rationale: [] }));
    }
    const inputs = pairs.flatMap((p, i) => sentences[i].map((premise) => ({ premise, hypothesis: p.claim })));
    const probs = await score(inputs);
    let next = 0;
    return sentences.map((s) => {
      next += s.length;
      return aggregateSentences(probs.slice(next - s.length, next), minConfidence);
    });
  };
  return makeVerifier(`onnx:${label}`, verifyPairs, async () => {
    await model.dispose();
  });
}
