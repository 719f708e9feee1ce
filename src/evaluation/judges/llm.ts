/**
 * The Ev2R judge on an OpenAI-compatible chat model, through the verification chat client (timeouts, retries,
 * concurrency limit, schema-checked JSON). Two prompts of our own: decompose an abstract into atomic
 * climate-science statements, and say which statements a text supports. Bump LLM_PROMPT_VERSION whenever a
 * prompt changes: it is part of the judge name and so of every cache key.
 */

import { z } from "zod";
import { readJsonConfig } from "../../data/config-file.ts";
import { DataError } from "../../data/errors.ts";
import {
  ChatClient,
  type ChatClientOptions,
  ChatEndpointSchema,
  type ChatMessage,
} from "../../verification/chat-client.ts";
import type { AbstractText, Judge } from "../ev2r.ts";

export const LLM_PROMPT_VERSION = "ev2r-llm-v1";
/** Facts kept per abstract (a long abstract's tail rarely adds evidence, and support prompts stay short). */
export const DEFAULT_MAX_FACTS = 20;

export const FACTS_PROMPT = `You split the abstract of a scientific publication on climate into atomic factual statements.
- An atomic statement states exactly one finding, measurement, method or conclusion of the text.
- Each statement stands alone: replace pronouns and abbreviations with what they refer to; keep numbers, units, places and time spans.
- Add nothing the text does not say. Skip statements about the paper itself (e.g. "this paper is organised as follows").
Answer with a JSON object only: {"facts": ["statement", ...]}`;

export const SUPPORT_PROMPT = `You check which statements a scientific text supports.
A statement is supported when the text states it or it follows directly from the text. It is not supported when the text contradicts it, does not mention it, or only mentions its topic.
Answer with a JSON object only: {"supported": [true or false for each numbered statement, in order]}`;

const FactsAnswer = z.object({ facts: z.array(z.string()).min(1) });

const docText = (d: AbstractText): string => (d.title ? `Title: ${d.title}\n${d.abstract}` : d.abstract);

export const factsMessages = (doc: AbstractText): ChatMessage[] => [
  { role: "system", content: FACTS_PROMPT },
  { role: "user", content: `Text:\n${docText(doc)}` },
];

export const supportMessages = (facts: readonly string[], evidence: AbstractText): ChatMessage[] => [
  { role: "system", content: SUPPORT_PROMPT },
  {
    role: "user",
    content: `Text:\n${docText(evidence)}\n\nStatements:\n${facts.map((f, i) => `[${i}] ${f}`).join("\n")}`,
  },
];

export interface LlmJudgeOptions extends ChatClientOptions {
  maxFacts?: number;
}

export function llmJudge(options: LlmJudgeOptions): Judge {
  const { maxFacts = DEFAULT_MAX_FACTS, ...chat } = options;
  const client = new ChatClient(chat);
  return {
    name: `llm-${LLM_PROMPT_VERSION}+${options.model}@${client.options.baseUrl}`,
    async atomicFacts(doc) {
      const answer = await client.completeJson(factsMessages(doc), FactsAnswer);
      const facts = [
        ...new Set(answer.facts.map((f) => f.replace(/\s+/g, " ").trim()).filter((f) => f !== "")),
      ];
      return facts.slice(0, maxFacts);
    },
    async supported(facts, evidence) {
      if (facts.length === 0) return [];
      // The schema wants one verdict per statement; a short or long list is retried like a broken answer.
      const schema = z.object({ supported: z.array(z.boolean()).length(facts.length) });
      return (await client.completeJson(supportMessages(facts, evidence), schema)).supported;
    },
  };
}

const LlmJudgeConfigSchema = ChatEndpointSchema.extend({ maxFacts: z.number().int().positive().optional() });

/** The judge's settings from a JSON file: the whole file, or its "judge" section (a project-wide config). */
export async function readLlmJudgeConfig(path: string): Promise<LlmJudgeOptions> {
  const { apiKeyEnv, ...options } = await readJsonConfig(path, LlmJudgeConfigSchema, "judge");
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey)
    throw new DataError(path, `environment variable ${apiKeyEnv} (the judge's API key) is not set`, {
      field: "apiKeyEnv",
    });
  return { ...options, apiKey };
}
