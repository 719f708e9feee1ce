/**
 * Opening a transformer exported to ONNX from a local folder with `@huggingface/transformers`: remote loading off,
 * nothing is ever downloaded. The folder holds config.json, tokenizer.json, tokenizer_config.json and the ONNX file
 * in onnx/ (transformers.js layout) or at the top (Optimum layout). Shared by every ONNX backend (dense retrieval,
 * cross-encoder re-ranking, NLI verification); each names its stage in the errors.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError } from "../data/errors.ts";
import { modelLabel } from "../models/cache.ts";

/** The optional package every ONNX stage runs on; not installed by `npm ci` (see docs/cli.md, verify, "onnx"). */
export const TRANSFORMERS_PACKAGE = "@huggingface/transformers";
/** The version the ONNX stages are tested with (.ci/run installs it). */
export const TRANSFORMERS_VERSION = "4.3.1";

/**
 * Loads the package on first use (onnxruntime-node is a large native library the built-in models do not need); when
 * it is not installed, says which package to install and how. `specifier` is for tests.
 */
export async function loadTransformers(
  specifier: string = TRANSFORMERS_PACKAGE,
  stage = "--backend onnx",
): Promise<unknown> {
  try {
    return await import(specifier);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // Only the package itself missing; a broken install inside it keeps its own error.
    if (code !== "ERR_MODULE_NOT_FOUND" || !String((e as Error).message).includes(`'${specifier}'`)) throw e;
    throw new DataError(
      stage,
      `the onnx backend needs the optional package ${specifier}, which is not installed: run ` +
        `\`npm install --no-save ${specifier}@${TRANSFORMERS_VERSION}\` (package.json's allowScripts keeps onnxruntime-node from downloading CUDA files)`,
    );
  }
}

/** Whether the optional package can be imported here (without loading it). */
export function transformersInstalled(specifier: string = TRANSFORMERS_PACKAGE): boolean {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/** The command that adds the optional package. */
export const TRANSFORMERS_INSTALL = `npm install --no-save ${TRANSFORMERS_PACKAGE}@${TRANSFORMERS_VERSION}`;

/** A tensor as the package returns it. */
export interface OnnxTensor {
  dims: number[];
  data: Float32Array;
}

/** The tokenizer call, typed locally (the package is optional, tsc runs without it). */
export type OnnxTokenizer = (
  text: string[],
  options: { text_pair?: string[]; padding: boolean; truncation: boolean; max_length: number },
) => unknown;

export interface OnnxModel {
  (inputs: unknown): Promise<Record<string, OnnxTensor | undefined>>;
  config: unknown;
  dispose(): Promise<unknown>;
}

export type OnnxDtype = "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4";
export const ONNX_DTYPES = ["fp32", "fp16", "q8", "int8", "uint8", "q4"] as const;

export interface OpenedOnnx {
  dir: string;
  /** How backend names call it: REPO@COMMIT7 for a pulled model, else the folder's name. */
  label: string;
  tokenizer: OnnxTokenizer;
  model: OnnxModel;
}

/**
 * Checks the folder, then loads tokenizer and model. `head`: the bare encoder (AutoModel: hidden states) or a
 * sequence classifier (logits). `stage` starts every error, e.g. "retrieval (dense)".
 */
export async function openOnnxFolder(
  modelDir: string,
  stage: string,
  head: "AutoModel" | "AutoModelForSequenceClassification",
  dtype: OnnxDtype = "fp32",
): Promise<OpenedOnnx> {
  // An absolute path is never taken for a hub model id, so the files are read from this folder and nowhere else.
  const dir = resolve(modelDir);
  if (!existsSync(dir)) throw new DataError(dir, `${stage}: no such model folder`);
  if (!existsSync(join(dir, "config.json")))
    throw new DataError(dir, `${stage}: no config.json (not an exported model folder)`);
  for (const file of ["tokenizer.json", "tokenizer_config.json"])
    if (!existsSync(join(dir, file)))
      throw new DataError(dir, `${stage}: no ${file} (export the tokenizer with the model)`);
  const t = (await loadTransformers(undefined, stage)) as unknown as {
    AutoTokenizer: { from_pretrained(dir: string, options: object): Promise<OnnxTokenizer> };
    env: { allowRemoteModels: boolean; allowLocalModels: boolean; useFSCache: boolean };
  } & Record<typeof head, { from_pretrained(dir: string, options: object): Promise<OnnxModel> }>;
  t.env.allowRemoteModels = false;
  t.env.allowLocalModels = true;
  t.env.useFSCache = false;
  const subfolder = existsSync(join(dir, "onnx")) ? "onnx" : "";
  // A missing or broken file is the user's to fix: name the folder and exit 2, like other bad input.
  const load = <T>(what: string, loading: Promise<T>) =>
    loading.catch((e: Error) => {
      throw new DataError(dir, `${stage}: cannot load the ${what} (${e.message})`);
    });
  const tokenizer = await load("tokenizer", t.AutoTokenizer.from_pretrained(dir, { local_files_only: true }));
  const model = await load(
    "model",
    t[head].from_pretrained(dir, { local_files_only: true, device: "cpu", dtype, subfolder }),
  );
  return { dir, label: modelLabel(dir), tokenizer, model };
}

/** Indices of `texts` sorted by length: a batch pads to its longest text, so like lengths batch together. */
export function byLength(texts: readonly string[]): number[] {
  return texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length || a - b);
}
