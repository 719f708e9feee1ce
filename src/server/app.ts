/**
 * The HTTP API and web page over one loaded Pipeline (Hono). Every request is logged as one JSON line; POST
 * bodies are size-limited and validated with zod; pipeline work is gated (in-flight limit -> 503 with
 * Retry-After) and timed out (504). The slot of a timed-out request is held until its work really ends, so the
 * gate keeps counting the CPU it still uses.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { corpusOf } from "../data/builtin-corpus.ts";
import { DataError, ServiceError } from "../data/errors.ts";
import { decodeUtf8Strict } from "../data/utf8.ts";
import type { ProfileInfo } from "../models/profile.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import { createGate } from "./gate.ts";
import { memoryReport, watchGc } from "./memory.ts";
import { openApiDocument } from "./openapi.ts";
import { CheckRequest, describeIssue, echo, NarrativesRequest, VerifyRequest } from "./schemas.ts";
import { CSP, WEB_DIR, WEB_PATHS, webFile } from "./web.ts";

export interface RequestLog {
  time: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface AppOptions {
  /** Requests doing pipeline work at once (default 4); more get 503. */
  maxInFlight?: number;
  /** Milliseconds before a request gets 504 (default 30 s). */
  timeoutMs?: number;
  /** Largest request body in bytes (default 64 KB). */
  maxBodyBytes?: number;
  /** Seconds a 503 asks the client to wait (Retry-After). */
  retryAfterSeconds?: number;
  /** Where the request log goes (default: one JSON line per request on stderr). */
  log?: (entry: RequestLog) => void;
  webDir?: string;
  version?: string;
  /** Origin allowed to call the API from a browser (`*` for any); none by default (same-origin only). */
  cors?: string;
  /** The profile the pipeline was loaded with (`--profile`/`--config`) and the hub models it names; shown in /healthz. */
  profile?: ProfileInfo | null;
}

/** The API's routes and their methods: any other method on these paths gets 405 with `Allow`. */
const API_METHODS: [string, string][] = [
  ["/v1/check", "POST"],
  ["/v1/verify", "POST"],
  ["/v1/narratives", "POST"],
  ["/v1/abstracts/:id", "GET, HEAD"],
  ["/healthz", "GET, HEAD"],
  ["/openapi.json", "GET, HEAD"],
];

/** A JSON media type: application/json or a +json type, with any parameters (charset). */
const isJson = (contentType: string | null) =>
  contentType !== null && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType.trim());

class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const stderrLog = (entry: RequestLog) => process.stderr.write(`${JSON.stringify(entry)}\n`);

export function createApp(pipeline: Pipeline, options: AppOptions = {}): Hono {
  const gate = createGate(options.maxInFlight ?? 4);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBody = options.maxBodyBytes ?? 64 * 1024;
  const log = options.log ?? stderrLog;
  const doc = openApiDocument(options.version ?? "0.1.0");
  const corpus = corpusOf(pipeline.indexDir, pipeline.abstracts);
  const app = new Hono();
  watchGc();

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    log({
      time: new Date().toISOString(),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });

  app.onError((err, c) => {
    if (err instanceof HttpError) return c.json({ error: err.message }, err.status, err.headers);
    if (err instanceof DataError) return c.json({ error: err.message }, 400);
    // A backend (a chat model) that did not answer: the client learns that much, the log has the endpoint.
    if (err instanceof ServiceError) {
      process.stderr.write(`${JSON.stringify({ level: "error", path: c.req.path, error: err.message })}\n`);
      return c.json({ error: "a backend service did not answer; retry later" }, 502);
    }
    process.stderr.write(`${JSON.stringify({ level: "error", path: c.req.path, error: String(err) })}\n`);
    return c.json({ error: "internal error" }, 500);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${echo(c.req.path)}` }, 404));

  // Cross-origin calls only when asked for (--cors); the preflight is answered here, before routing.
  if (options.cors) app.use("*", cors({ origin: options.cors }));

  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => c.json({ error: `request body is larger than ${maxBody} bytes` }, 413),
    }),
  );

  async function body<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
    const type = req.headers.get("content-type");
    if (!isJson(type))
      throw new HttpError(
        415,
        `request body must be JSON sent as Content-Type: application/json${type ? `, not ${echo(type)}` : ""}`,
      );
    // Strictly: a replaced byte would change the claim every model reads.
    const decoded = decodeUtf8Strict(new Uint8Array(await req.arrayBuffer()));
    if ("offset" in decoded)
      throw new HttpError(
        400,
        `request body is not valid UTF-8 at byte ${decoded.offset} (from 0); send JSON encoded as UTF-8`,
      );
    let value: unknown;
    try {
      value = JSON.parse(decoded.text);
    } catch {
      throw new HttpError(400, "request body must be a JSON object");
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new HttpError(400, describeIssue(parsed.error, value));
    return parsed.data;
  }

  /** Runs pipeline work inside the gate and the timeout. */
  async function gated<T>(work: () => Promise<T>): Promise<T> {
    const release = gate.tryEnter();
    if (!release) {
      const retry = String(options.retryAfterSeconds ?? 1);
      throw new HttpError(503, "too many requests in flight; retry shortly", { "Retry-After": retry });
    }
    const running = work().finally(release);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HttpError(504, `the request took longer than ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    running.catch(() => {}); // a rejection after the timeout won the race is not unhandled
    try {
      return await Promise.race([running, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  app.post("/v1/check", async (c) => {
    const req = await body(c.req.raw, CheckRequest);
    return c.json(await gated(() => pipeline.check(req.claim, { k: req.k })));
  });

  app.post("/v1/narratives", async (c) => {
    const req = await body(c.req.raw, NarrativesRequest);
    return c.json({ claim: req.claim, ...(await gated(() => pipeline.narratives(req.claim))) });
  });

  app.post("/v1/verify", async (c) => {
    const req = await body(c.req.raw, VerifyRequest);
    if ("abstract_id" in req) {
      if (!pipeline.abstract(req.abstract_id))
        throw new HttpError(404, `no abstract "${echo(req.abstract_id)}" in the index`);
      return c.json(await gated(() => pipeline.verify(req.claim, req.abstract_id)));
    }
    return c.json(
      await gated(() => pipeline.verify(req.claim, { abstract: req.abstract, title: req.title })),
    );
  });

  app.get("/v1/abstracts/:id", (c) => {
    const id = c.req.param("id");
    const found = pipeline.abstract(id);
    if (!found) throw new HttpError(404, `no abstract "${echo(id)}" in the index`);
    return c.json(found);
  });

  app.get("/healthz", (c) =>
    c.json({
      status: "ok" as const,
      abstracts: pipeline.abstracts,
      verifier: pipeline.verifierName,
      retrieval: pipeline.retrieval,
      backends: pipeline.backends,
      in_flight: gate.inFlight,
      pid: process.pid,
      corpus,
      profile: options.profile ?? null,
      memory: memoryReport(),
    }),
  );
  app.get("/openapi.json", (c) => c.json(doc));

  const notAllowed = (path: string, allow: string) =>
    app.all(path, (c) =>
      c.json({ error: `${c.req.method} is not allowed on ${c.req.path}; use ${allow}` }, 405, {
        Allow: allow,
      }),
    );
  for (const [path, allow] of API_METHODS) notAllowed(path, allow);

  app.get("*", async (c) => {
    const file = await webFile(c.req.path, options.webDir ?? WEB_DIR);
    if (!file) return c.json({ error: `no route GET ${echo(c.req.path)}` }, 404);
    return c.body(file.body, 200, {
      "content-type": file.type,
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
    });
  });

  // After the GET route above, so only other methods reach these.
  for (const path of WEB_PATHS) notAllowed(path, "GET, HEAD");

  return app;
}
