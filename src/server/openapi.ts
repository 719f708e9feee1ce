/**
 * The OpenAPI 3.1 document of the HTTP API (GET /openapi.json). Schemas come from the zod schemas the server
 * validates with (OpenAPI 3.1 uses JSON Schema 2020-12, which z.toJSONSchema writes); the paths are written here.
 */
import { z } from "zod";
import {
  AbstractRecordSchema,
  CheckRequest,
  CheckResultSchema,
  ErrorResponse,
  HealthResponse,
  NarrativesRequest,
  NarrativesResponse,
  PairVerdictSchema,
  VerifyRequest,
} from "./schemas.ts";

function schema(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ "application/json": { schema: ref(name) } });
const error = (description: string) => ({ description, content: json("Error") });

/** Answers every POST route can give besides 200. */
const POST_ERRORS = {
  "400": error(
    "Invalid input: not JSON, not UTF-8 (the byte offset is named), a missing or wrong field, an empty claim. `error` says which.",
  ),
  "405": {
    ...error("Another method than POST; `Allow` names the one allowed."),
    headers: { Allow: { schema: { type: "string" } } },
  },
  "413": error("Body larger than the limit (64 KB by default)."),
  "415": error("The body is not sent as `Content-Type: application/json`."),
  "503": {
    ...error("Too many requests in flight; retry after the `Retry-After` seconds."),
    headers: { "Retry-After": { schema: { type: "integer" } } },
  },
  "502": error("A backend service (a chat model of the profile) did not answer; retry later."),
  "504": error("The request took longer than the server's timeout."),
};

function post(summary: string, request: string, response: string, extra: Record<string, unknown> = {}) {
  return {
    post: {
      summary,
      requestBody: { required: true, content: json(request) },
      responses: { "200": { description: "OK", content: json(response) }, ...extra, ...POST_ERRORS },
    },
  };
}

export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "ClimateCheck API",
      version,
      description:
        'Checks climate claims against scientific abstracts (ClimateCheck 2026): retrieval, verification with rationale sentences and CARDS narratives. Errors are `{ "error": "..." }`.',
    },
    paths: {
      "/v1/check": post(
        "Narratives, the top k abstracts with verdicts and rationales, summary and caution",
        "CheckRequest",
        "CheckResult",
      ),
      "/v1/verify": post(
        "Verify the claim against one abstract, by id or as text",
        "VerifyRequest",
        "PairVerdict",
        { "404": error("No abstract with that abstract_id in the index.") },
      ),
      "/v1/narratives": post("The claim's CARDS narratives", "NarrativesRequest", "NarrativesResponse"),
      "/v1/abstracts/{id}": {
        get: {
          summary: "One abstract of the index with its sentences",
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: {
            "200": { description: "OK", content: json("AbstractRecord") },
            "404": error("No abstract with that id."),
          },
        },
      },
      "/healthz": {
        get: {
          summary: "Liveness and what is loaded",
          responses: { "200": { description: "OK", content: json("Health") } },
        },
      },
      "/openapi.json": {
        get: { summary: "This document", responses: { "200": { description: "OK" } } },
      },
    },
    components: {
      schemas: {
        CheckRequest: schema(CheckRequest, "input"),
        VerifyRequest: schema(VerifyRequest, "input"),
        NarrativesRequest: schema(NarrativesRequest, "input"),
        CheckResult: schema(CheckResultSchema, "output"),
        PairVerdict: schema(PairVerdictSchema, "output"),
        NarrativesResponse: schema(NarrativesResponse, "output"),
        AbstractRecord: schema(AbstractRecordSchema, "output"),
        Health: schema(HealthResponse, "output"),
        Error: schema(ErrorResponse, "output"),
      },
    },
  };
}
