/**
 * Which verifier backend to use: a JSON config file (validated) and/or a `--backend` flag; the built-in trained
 * verifier is the default. API keys are never stored in the file: it names the environment variable instead.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { DataError } from "../data/errors.ts";
import { openChatVerifier } from "./backends/chat.ts";
import { openBuiltinVerifier } from "./builtin.ts";
import type { Verifier } from "./verifier.ts";

const BuiltinConfig = z.object({
  backend: z.literal("builtin"),
  /** Path of the model JSON; default models/verification/model.json. */
  model: z.string().optional(),
});

const ChatConfig = z.object({
  backend: z.literal("chat"),
  baseUrl: z.string().url(),
  model: z.string().min(1),
  /** Environment variable holding the API key, if the server needs one. */
  apiKeyEnv: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  retries: z.number().int().min(0).optional(),
  backoffMs: z.number().int().min(0).optional(),
  concurrency: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  jsonMode: z.boolean().optional(),
});

export const VerifierConfigSchema = z.discriminatedUnion("backend", [BuiltinConfig, ChatConfig]);
export type VerifierConfig = z.infer<typeof VerifierConfigSchema>;
export const BACKENDS = ["builtin", "chat"] as const;

export async function readVerifierConfig(path: string): Promise<VerifierConfig> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (e) {
    throw new DataError(path, `not a readable JSON file (${(e as Error).message})`);
  }
  // A project-wide config may keep the verifier settings under "verification".
  const section = (value as { verification?: unknown })?.verification ?? value;
  const parsed = VerifierConfigSchema.safeParse(section);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DataError(path, issue?.message ?? "invalid verifier config", { field: issue?.path.join(".") });
  }
  return parsed.data;
}

/** The config from file and flag: the flag picks the backend, the file gives its settings. */
export async function resolveVerifierConfig(options: {
  config?: string;
  backend?: string;
}): Promise<VerifierConfig> {
  const fromFile = options.config ? await readVerifierConfig(options.config) : undefined;
  const backend = options.backend ?? fromFile?.backend ?? "builtin";
  if (!(BACKENDS as readonly string[]).includes(backend))
    throw new DataError("--backend", `unknown backend "${backend}" (expected ${BACKENDS.join(", ")})`);
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
  }
}
