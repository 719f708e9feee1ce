/**
 * CARDS narratives (task 2) from an OpenAI-compatible chat model (Ollama, vLLM, llama.cpp server), as the best
 * task-2 systems did: our prompt names every code with its description; "flat" asks for the codes at once,
 * "two-step" asks for the groups first, then for the codes within the chosen groups. Requests go through ChatClient
 * (timeouts, retries, concurrency limit); answers are JSON validated against a schema: unknown codes, and 0_0
 * together with another code, are rejected (and retried like any invalid answer). Identical claims are asked once.
 *
 * The model gives codes, not probabilities: a named code is shown with probability 1 (its group code too), every
 * other code 0, and P(narrative) is 1 or 0, so the labels never contradict the numbers beside them.
 */
import { z } from "zod";
import {
  canonicalCodeSet,
  GROUPS,
  type Group,
  groupCode,
  groupOf,
  NARRATIVE_CODES,
  NARRATIVES,
  NO_NARRATIVE,
  narrativeInfo,
  normaliseNarrativeCode,
  subCodes,
} from "../taxonomy/cards.ts";
import { ChatClient, type ChatClientOptions, type ChatMessage } from "../verification/chat-client.ts";
import type { NarrativePrediction } from "./classifier.ts";

export type ChatNarrativesMode = "flat" | "two-step";

export interface ChatNarrativesOptions extends ChatClientOptions {
  mode?: ChatNarrativesMode;
  /** Ask for a short reasoning before the answer (chain of thought; the reasoning is not kept). */
  reasoning?: boolean;
}

/** A code as the model may write it (5.1, 5_1, "3"), normalised; anything else is an issue. */
const CodeSchema = z.string().transform((s, ctx) => {
  const code = normaliseNarrativeCode(s);
  if (!code) ctx.addIssue({ code: "custom", message: `unknown CARDS code "${s}"` });
  return code ?? NO_NARRATIVE;
});

/** 0_0 means "no narrative": never beside another code. */
const exclusive = (codes: string[], ctx: z.RefinementCtx) => {
  if (codes.includes(NO_NARRATIVE) && codes.length > 1)
    ctx.addIssue({ code: "custom", message: "0_0 (no narrative) must stand alone" });
};

export const CodesAnswerSchema = z.object({
  reasoning: z.string().optional(),
  codes: z.array(CodeSchema).min(1).superRefine(exclusive),
});

export const GroupsAnswerSchema = z.object({
  reasoning: z.string().optional(),
  groups: z
    .array(
      z.union([z.number(), z.string()]).transform((g, ctx) => {
        const n = Number(String(g).split(/[._]/)[0]);
        if (!(GROUPS as readonly number[]).includes(n))
          ctx.addIssue({ code: "custom", message: `unknown CARDS group "${g}" (expected 0 to 5)` });
        return n as Group;
      }),
    )
    .min(1)
    .superRefine((groups, ctx) => {
      if (groups.includes(0) && groups.length > 1)
        ctx.addIssue({ code: "custom", message: "group 0 (no narrative) must stand alone" });
    }),
});

const line = (code: string) => {
  const n = narrativeInfo(code);
  return `${code}: ${n.name}. ${n.description}`;
};

const INTRO = `You label claims about climate change with the CARDS taxonomy of contrarian climate narratives.
A claim may carry several narratives, or none (0_0). Label what the claim itself asserts; a claim that reports
mainstream science, or is not about the climate, is 0_0. A group code X_0 means group X with no sub-narrative that fits.`;

/** The flat prompt: every code with its name and description. */
export function flatSystemPrompt(reasoning = false): string {
  return `${INTRO}

Codes:
${NARRATIVE_CODES.map(line).join("\n")}

Answer with a JSON object only: {${reasoning ? '"reasoning": "one or two sentences", ' : ""}"codes": ["code", ...]} (0_0 alone when no narrative applies).`;
}

/** Step one of two: the groups, each with its code list so the model knows what the group covers. */
export function groupsSystemPrompt(reasoning = false): string {
  const groups = GROUPS.map((g) => {
    const info = narrativeInfo(groupCode(g));
    const subs = subCodes(g).map((c) => narrativeInfo(c).name);
    return `${g}: ${info.name}. ${info.description}${subs.length ? ` (e.g. ${subs.join("; ")})` : ""}`;
  });
  return `${INTRO}

First choose the groups. Groups:
${groups.join("\n")}

Answer with a JSON object only: {${reasoning ? '"reasoning": "one or two sentences", ' : ""}"groups": [group numbers]} ([0] alone when no narrative applies).`;
}

/** Step two: the codes of the chosen groups only. */
export function codesSystemPrompt(groups: readonly Group[], reasoning = false): string {
  const codes = NARRATIVES.filter((n) => groups.includes(n.group)).map((n) => n.code);
  return `${INTRO}

The claim carries narratives of group(s) ${groups.join(", ")}. Choose its codes among:
${codes.map(line).join("\n")}

Answer with a JSON object only: {${reasoning ? '"reasoning": "one or two sentences", ' : ""}"codes": ["code", ...]} (use the group code X_0 when no sub-narrative of group X fits).`;
}

/** Codes as a prediction whose numbers agree with them (see the header). */
export function codesToPrediction(codes: readonly string[]): NarrativePrediction {
  const set = canonicalCodeSet(codes);
  const probabilities: Record<string, number> = Object.fromEntries(NARRATIVE_CODES.map((c) => [c, 0]));
  for (const c of set) {
    probabilities[c] = 1;
    probabilities[groupCode(groupOf(c))] = 1;
  }
  const narrative = set[0] === NO_NARRATIVE ? 0 : 1;
  probabilities[NO_NARRATIVE] = 1 - narrative;
  return { codes: set, narrative, probabilities };
}

export interface ChatNarratives {
  readonly name: string;
  classify(texts: string[]): Promise<NarrativePrediction[]>;
}

export function openChatNarratives(options: ChatNarrativesOptions): ChatNarratives {
  const { mode = "flat", reasoning = false, ...chat } = options;
  const client = new ChatClient({ stage: "narratives (chat)", ...chat });
  const user = (claim: string): ChatMessage => ({ role: "user", content: `Claim: ${claim}` });
  const ask = async (claim: string): Promise<NarrativePrediction> => {
    if (mode === "flat") {
      const a = await client.completeJson(
        [{ role: "system", content: flatSystemPrompt(reasoning) }, user(claim)],
        CodesAnswerSchema,
      );
      return codesToPrediction(a.codes);
    }
    const g = await client.completeJson(
      [{ role: "system", content: groupsSystemPrompt(reasoning) }, user(claim)],
      GroupsAnswerSchema,
    );
    const groups = [...new Set(g.groups)].sort();
    if (groups[0] === 0) return codesToPrediction([NO_NARRATIVE]);
    // Step two may only name codes of the chosen groups.
    const allowed = new Set(NARRATIVES.filter((n) => groups.includes(n.group)).map((n) => n.code));
    const inGroups = CodesAnswerSchema.superRefine((a, ctx) => {
      for (const c of a.codes)
        if (!allowed.has(c))
          ctx.addIssue({
            code: "custom",
            message: `code ${c} is not in the chosen group(s) ${groups.join(", ")}`,
          });
    });
    const a = await client.completeJson(
      [{ role: "system", content: codesSystemPrompt(groups, reasoning) }, user(claim)],
      inGroups,
    );
    return codesToPrediction(a.codes);
  };
  // The client's limiter bounds the requests in flight; identical claims share one request.
  const memo = new Map<string, Promise<NarrativePrediction>>();
  return {
    name: `chat:${chat.model}/${mode}`,
    classify(texts) {
      return Promise.all(
        texts.map((t) => {
          let p = memo.get(t);
          if (!p) {
            if (memo.size >= 10_000) memo.clear();
            p = ask(t);
            memo.set(t, p);
            // A failed request is not kept: the next call asks again.
            p.catch(() => memo.delete(t));
          }
          return p;
        }),
      );
    },
  };
}
