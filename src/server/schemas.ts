/**
 * The HTTP API's shapes as zod schemas: requests are validated with them, and openapi.ts turns them (responses
 * too) into the OpenAPI document, so the document cannot drift from what the server accepts and returns.
 */
import { z } from "zod";
import type { CorpusInfo } from "../data/builtin-corpus.ts";
import type { ProfileInfo } from "../models/profile.ts";
import { DEFAULT_K, MAX_K } from "../pipeline/pipeline.ts";
import type { AbstractRecord, CheckResult, NarrativeHit, PairVerdict } from "../pipeline/result.ts";
import { MAX_CLAIM_CHARS } from "../retrieval/retriever.ts";
import { LABELS } from "../types.ts";
import type { MemoryReport } from "./memory.ts";

/** Most characters of a request's own text (a field name, an id, a path) that an error message repeats. */
export const MAX_ECHO_CHARS = 200;

/** User input as an error message quotes it: at most MAX_ECHO_CHARS characters, then how long it was. */
export const echo = (s: string): string =>
  s.length <= MAX_ECHO_CHARS ? s : `${s.slice(0, MAX_ECHO_CHARS)}… (${s.length} characters)`;

/** Longest abstract text accepted by /v1/verify (the body limit is the other bound). */
export const MAX_ABSTRACT_CHARS = 20_000;

const Claim = z
  .string()
  .trim()
  .min(1, "claim is empty")
  .max(MAX_CLAIM_CHARS, `claim is longer than ${MAX_CLAIM_CHARS} characters`)
  .describe(`The claim to check: one or two sentences, at most ${MAX_CLAIM_CHARS} characters.`);

export const CheckRequest = z.strictObject({
  claim: Claim,
  k: z
    .number()
    .int()
    .min(1)
    .max(MAX_K)
    .optional()
    .describe(`Abstracts to retrieve and verify (default ${DEFAULT_K}).`),
});

export const NarrativesRequest = z.strictObject({ claim: Claim });

export const VerifyRequest = z.union([
  z.strictObject({
    claim: Claim,
    abstract_id: z.string().min(1, "abstract_id is empty").describe("An abstract of the index."),
  }),
  z.strictObject({
    claim: Claim,
    abstract: z
      .string()
      .trim()
      .min(1, "abstract is empty")
      .max(MAX_ABSTRACT_CHARS, `abstract is longer than ${MAX_ABSTRACT_CHARS} characters`)
      .describe("An abstract given as text."),
    title: z.string().optional(),
  }),
]);

const probability = z.number().min(0).max(1);

export const NarrativeHitSchema = z.strictObject({
  code: z.string().describe("CARDS code, e.g. 5_1"),
  name: z.string(),
  description: z.string(),
  probability: probability.describe("Marginal probability: P(group) x P(code given group)."),
});

const Titles = {
  title: z
    .string()
    .nullable()
    .describe("The title with TeX-like markup made readable (2{\\deg}C -> 2°C, M\\'artir -> Mártir)."),
  title_raw: z.string().nullable().describe("The title as the corpus has it."),
};

const Links = {
  year: z.number().int().optional(),
  doi: z.string().optional(),
  url: z.string().optional().describe("The corpus URL, else https://doi.org/DOI."),
};

export const PairVerdictSchema = z.strictObject({
  abstract_id: z.string().nullable().describe("null for an abstract given as text."),
  ...Titles,
  ...Links,
  label: z.enum(LABELS),
  confidence: probability.describe("Probability of the chosen label."),
  p_supports: probability,
  p_refutes: probability,
  p_nei: probability,
  rationale: z.array(z.string()).describe("The rationale sentences' text (empty for NEI)."),
  rationale_indices: z.array(z.number().int().min(0)).describe("Their indices in `sentences`."),
  sentences: z.array(z.string()).describe("Every sentence of the abstract, in order."),
  relevance: probability
    .nullable()
    .describe("P(the abstract is about the claim's subject), from the relevance gate; null without one."),
  about_claim: z
    .boolean()
    .describe(
      "relevance at or above 0.5. If false the abstract takes no side (NEI) and is left out of the summary.",
    ),
});

export const EvidenceSchema = PairVerdictSchema.extend({
  abstract_id: z.string(),
  rank: z.number().int().min(1),
  retrieval_score: z.number(),
});

const ScopeSchema = z
  .strictObject({
    in_scope: z.boolean(),
    p_climate: probability.nullable().describe("P(the claim is about climate); null without a scope model."),
    english: z.boolean(),
    reason: z.string().nullable(),
  })
  .describe("Whether the claim is an English claim about climate, what ClimateCheck checks.");

/** The narratives part of a check, also the whole of a /v1/narratives answer. */
const AssessedNarratives = {
  narratives: z.array(NarrativeHitSchema).describe("Empty when the claim is out of scope."),
  p_narrative: probability
    .nullable()
    .describe("P(the claim carries any narrative); null when out of scope (not assessed)."),
};

export const CheckResultSchema = z.strictObject({
  claim: z.string(),
  scope: ScopeSchema,
  ...AssessedNarratives,
  evidence: z.array(EvidenceSchema),
  summary: z.strictObject({
    supports: z.number().int().describe("Counts are over the abstracts about the claim."),
    refutes: z.number().int(),
    nei: z.number().int(),
    not_about_claim: z.number().int().describe("Abstracts found that are not about the claim."),
    lean: z.enum(["supports", "refutes", "mixed", "insufficient", "out_of_scope"]),
    lean_confidence: probability,
    text: z.string(),
  }),
  caution: z.strictObject({
    needs_human_review: z.boolean(),
    reason: z.string().nullable(),
  }),
  timings_ms: z.strictObject({
    narratives: z.number(),
    retrieval: z.number(),
    verification: z.number(),
    total: z.number(),
  }),
});

export const AbstractRecordSchema = z.strictObject({
  abstract_id: z.string(),
  ...Titles,
  ...Links,
  abstract: z.string(),
  sentences: z.array(z.string()),
});

export const NarrativesResponse = z.strictObject({
  claim: z.string(),
  scope: ScopeSchema,
  ...AssessedNarratives,
});

export const HealthResponse = z.strictObject({
  status: z.literal("ok"),
  abstracts: z.number().int(),
  verifier: z.string(),
  retrieval: z.enum(["re-ranked", "fused", "bm25"]),
  backends: z
    .strictObject({ narratives: z.string(), retrieval: z.string(), verification: z.string() })
    .describe("The backend of each stage: built-in, or the models a profile (--config) names."),
  in_flight: z.number().int(),
  /** The process that answered (with `serve --workers N`, each worker has its own). */
  pid: z.number().int(),
  corpus: z
    .strictObject({
      name: z.string(),
      abstracts: z.number().int(),
      builtin: z.boolean(),
      note: z.string().nullable(),
    })
    .describe("What the index holds; for the built-in demo corpus, `note` says how to load the real one."),
  profile: z
    .strictObject({
      name: z.string(),
      models: z.array(
        z.strictObject({ stage: z.string(), repo: z.string(), revision: z.string(), dtype: z.string() }),
      ),
    })
    .nullable()
    .describe(
      "The profile loaded (serve --profile/--config): its name and each hub model it names (where in the profile, repository, revision, ONNX dtype); null without one.",
    ),
  memory: z.strictObject({
    rss_mb: z.number(),
    heap_used_mb: z.number(),
    heap_total_mb: z.number(),
    external_mb: z.number(),
    array_buffers_mb: z.number(),
    heap_after_gc_mb: z.number().nullable(),
    major_gcs: z.number().int(),
  }),
});

export const ErrorResponse = z.strictObject({ error: z.string() });

// Compile-time proof that the schemas describe exactly the pipeline's types.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same: [
  Same<z.infer<typeof CheckResultSchema>, CheckResult>,
  Same<z.infer<typeof PairVerdictSchema>, PairVerdict>,
  Same<z.infer<typeof NarrativeHitSchema>, NarrativeHit>,
  Same<z.infer<typeof AbstractRecordSchema>, AbstractRecord>,
  Same<z.infer<typeof HealthResponse>["memory"], MemoryReport>,
  Same<z.infer<typeof HealthResponse>["corpus"], CorpusInfo>,
  Same<z.infer<typeof HealthResponse>["profile"], ProfileInfo | null>,
] = [true, true, true, true, true, true, true];
void same;

/** The first problem of a failed parse as one line: `field: message`, quoting at most MAX_ECHO_CHARS of input. */
export function describeIssue(error: z.ZodError, body: unknown): string {
  const issue = error.issues[0];
  if (!issue) return "invalid request";
  const where = (path: PropertyKey[]) => echo(path.map(String).join(".")) || "body";
  // zod's own message for unknown keys repeats them whole.
  const say = (i: z.core.$ZodIssue) =>
    i.code === "unrecognized_keys"
      ? `${where(i.path)}: unknown field ${echo(i.keys.map((k) => `"${k}"`).join(", "))}`
      : `${where(i.path)}: ${i.message}`;
  if (issue.code === "invalid_union") {
    // /v1/verify: say what is missing rather than list both alternatives' failures.
    // A body that is not an object (0, "x", true: found by fuzzing, it was a 500) is told so.
    if (typeof body !== "object" || body === null || Array.isArray(body))
      return body !== null && typeof body === "object"
        ? "give abstract_id or abstract (with an optional title)"
        : "body: a JSON object is expected";
    const o = body as Record<string, unknown>;
    if (!("abstract_id" in o) && !("abstract" in o))
      return "give abstract_id or abstract (with an optional title)";
    if ("abstract_id" in o && "abstract" in o) return "give abstract_id or abstract, not both";
    const inner = issue.errors.find((errs) => errs.some((e) => e.path[0] !== "abstract" || "abstract" in o));
    const first = inner?.[0];
    if (first) return say(first);
  }
  return say(issue);
}
