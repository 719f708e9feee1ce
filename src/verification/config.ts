/**
 * Which verifier backend to use: a JSON config file (validated) and/or a `--backend` flag; the built-in trained
 * verifier is the default. API keys are never stored in the file: it names the environment variable instead.
 */

import { z } from "zod";
import { readJsonConfig } from "../data/config-file.ts";
import { DataError } from "../data/errors.ts";
import { openChatVerifier } from "./backends/chat.ts";
import { openOnnxVerifier } from "./backends/onnx.ts";
import { openBuiltinVerifier } from "./builtin.ts";
import { ChatEndpointSchema } from "./chat-client.ts";
import type { Verifier } from "./verifier.ts";

const BuiltinConfig = z.object({
  backend: z.literal("builtin"),
  /** Path of the model JSON; default models/verification/model.json. */
  model: z.string().optional(),
});

const ChatConfig = ChatEndpointSchema.extend({ backend: z.literal("chat") });

/** An ONNX NLI cross-encoder from a local folder (see backends/onnx.ts). */
const OnnxConfig = z.object({
  backend: z.literal("onnx"),
  modelDir: z.string().min(1),
  /** Model class (id2label name or index) → supports/refutes/nei; default: the MNLI names. */
  labelMap: z.record(z.string(), z.enum(["supports", "refutes", "nei"])).optional(),
  maxLength: z.number().int().positive().optional(),
  batchSize: z.number().int().positive().optional(),
  sentenceLevel: z.boolean().optional(),
  dtype: z.enum(["fp32", "fp16", "q8", "int8", "uint8", "q4"]).optional(),
  minConfidence: z.number().min(0).max(1).optional(),
});

export const VerifierConfigSchema = z.discriminatedUnion("backend", [BuiltinConfig, ChatConfig, OnnxConfig]);
export type VerifierConfig = z.infer<typeof VerifierConfigSchema>;
export const BACKENDS = ["builtin", "chat", "onnx"] as const;

export async function readVerifierConfig(path: string): Promise<VerifierConfig> {
  // A profile without a verification section keeps the built-in verifier.
  return readJsonConfig(path, VerifierConfigSchema, "verification", { backend: "builtin" });
}

/** The config from file and flag: the flag picks the backend, the file gives its settings. */
export async function resolveVerifierConfig(options: {
  config?: string;
  backend?: string;
  /** `--model-dir`: the onnx backend's folder, enough without a config file (and over the file's). */
  modelDir?: string;
}): Promise<VerifierConfig> {
  const fromFile = options.config ? await readVerifierConfig(options.config) : undefined;
  const backend = options.backend ?? fromFile?.backend ?? (options.modelDir ? "onnx" : "builtin");
  if (!(BACKENDS as readonly string[]).includes(backend))
    throw new DataError("--backend", `unknown backend "${backend}" (expected ${BACKENDS.join(", ")})`);
  if (backend === "onnx" && options.modelDir)
    return { ...(fromFile?.backend === "onnx" ? fromFile : {}), backend: "onnx", modelDir: options.modelDir };
  if (fromFile && fromFile.backend === backend) return fromFile;
  if (backend === "builtin") return { backend: "builtin" };
  throw new DataError(
    options.config ?? "--config",
    `backend "${backend}" needs its settings in a config file`,
  );
}

export async function openVerifier(config: VerifierConfig = { backend: "builtin" }): Promise<Verifier> {
  switch (config.backend) {
    case "builtin":
      return openBuiltinVerifier({ modelPath: config.model });
    case "chat": {
      const { backend: _b, apiKeyEnv, ...chat } = config;
      const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
      if (apiKeyEnv && !apiKey)
        throw new Error(`environment variable ${apiKeyEnv} (the chat API key) is not set`);
      return openChatVerifier({ ...chat, apiKey });
    }
    case "onnx": {
      const { backend: _b, ...onnx } = config;
      return openOnnxVerifier(onnx);
    }
  }
}
