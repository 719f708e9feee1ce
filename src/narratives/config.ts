/**
 * Which narratives backend (task 2) to use: the "narratives" section of a profile. Default: the shipped
 * classifier (models/narratives); "chat": an OpenAI-compatible chat model (src/narratives/chat.ts).
 */
import { z } from "zod";
import { readJsonConfig } from "../data/config-file.ts";
import { ChatEndpointSchema } from "../verification/chat-client.ts";
import { openChatNarratives } from "./chat.ts";
import type { NarrativePrediction } from "./classifier.ts";

export const NarrativesConfigSchema = z.discriminatedUnion("backend", [
  z.object({ backend: z.literal("builtin") }).strict(),
  ChatEndpointSchema.extend({
    backend: z.literal("chat"),
    /** flat: all codes in one question; two-step: the groups, then the codes within them. */
    mode: z.enum(["flat", "two-step"]).optional(),
    /** Ask for a short reasoning before the answer (chain of thought). */
    reasoning: z.boolean().optional(),
  }).strict(),
]);
export type NarrativesConfig = z.infer<typeof NarrativesConfigSchema>;

/** The "narratives" section of a profile; no file, or a profile without the section, is the built-in classifier. */
export async function readNarrativesConfig(path?: string): Promise<NarrativesConfig> {
  if (!path) return { backend: "builtin" };
  return readJsonConfig(path, NarrativesConfigSchema, "narratives", { backend: "builtin" }, true);
}

export interface NarrativesBackend {
  readonly name: string;
  classify(texts: string[]): Promise<NarrativePrediction[]>;
}

/** A configured (non built-in) narratives backend; the API key comes from the environment variable named. */
export function openNarrativesBackend(
  config: Exclude<NarrativesConfig, { backend: "builtin" }>,
): NarrativesBackend {
  const { backend: _b, apiKeyEnv, ...chat } = config;
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey)
    throw new Error(`narratives (chat): environment variable ${apiKeyEnv} (the chat API key) is not set`);
  return openChatNarratives({ ...chat, apiKey });
}
