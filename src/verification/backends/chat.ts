/**
 * Verifier backend on an OpenAI-compatible chat model (Ollama, vLLM, llama.cpp server): one fixed prompt per
 * pair with numbered abstract sentences, a JSON answer validated against a schema, requests through ChatClient
 * (timeouts, retries, concurrency limit).
 */
import { z } from "zod";
import { LABELS, type Label, NEI } from "../../types.ts";
import { ChatClient, type ChatClientOptions, type ChatMessage } from "../chat-client.ts";
import {
  abstractSentences,
  makeVerifier,
  type Verdict,
  type Verifier,
  type VerifyPair,
} from "../verifier.ts";

export const SYSTEM_PROMPT = `You check scientific claims against research abstracts.
Decide whether the abstract Supports the claim, Refutes it, or gives Not Enough Information.
- Supports: the abstract's findings directly confirm the claim.
- Refutes: the abstract's findings directly contradict the claim (including findings of no effect when the claim says there is one).
- Not Enough Information: the abstract is on a related topic but does not settle the claim; weak or indirect evidence is Not Enough Information.
Answer with a JSON object only: {"label": "Supports" | "Refutes" | "Not Enough Information", "confidence": number between 0 and 1, "rationale": [indices of the abstract sentences that justify the label; empty for Not Enough Information]}`;

const LABEL_BY_LOWER = new Map<string, Label>(LABELS.map((l) => [l.toLowerCase(), l]));

export const AnswerSchema = z.object({
  label: z.string().transform((s, ctx) => {
    const label = LABEL_BY_LOWER.get(s.trim().replace(/\s+/g, " ").toLowerCase());
    if (!label) ctx.addIssue({ code: "custom", message: `unknown label "${s}"` });
    return label ?? NEI;
  }),
  confidence: z.number().min(0).max(1),
  rationale: z.array(z.number().int()).default([]),
});

export type Answer = z.infer<typeof AnswerSchema>;

export function userPrompt(pair: VerifyPair, sentences: readonly string[]): string {
  const lines = [`Claim: ${pair.claim}`, ""];
  if (pair.title) lines.push(`Title: ${pair.title}`);
  lines.push("Abstract sentences:");
  sentences.forEach((s, i) => {
    lines.push(`[${i}] ${s}`);
  });
  return lines.join("\n");
}

/**
 * The answer as a verdict: the label gets the stated confidence (at least 0.34, so it stays the most probable
 * class), the rest is shared evenly.
 */
export function answerToVerdict(answer: Answer, sentenceCount: number): Verdict {
  const confidence = Math.max(0.34, answer.confidence);
  const rest = (1 - confidence) / 2;
  const p = (l: Label) => (l === answer.label ? confidence : rest);
  const rationale =
    answer.label === NEI
      ? []
      : [...new Set(answer.rationale.filter((i) => i >= 0 && i < sentenceCount))].sort((a, b) => a - b);
  return {
    label: answer.label,
    confidence,
    probs: { supports: p("Supports"), refutes: p("Refutes"), nei: p(NEI) },
    rationale,
  };
}

export function openChatVerifier(options: ChatClientOptions): Verifier {
  const client = new ChatClient({ stage: "verification (chat)", ...options });
  const one = async (pair: VerifyPair): Promise<Verdict> => {
    const sentences = abstractSentences(pair);
    const messages: ChatMessage[] = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: userPrompt(pair, sentences) },
    ];
    return answerToVerdict(await client.completeJson(messages, AnswerSchema), sentences.length);
  };
  // The client's limiter bounds the requests in flight, so all pairs can be queued at once.
  return makeVerifier(`chat:${options.model}`, (pairs) => Promise.all(pairs.map(one)));
}
