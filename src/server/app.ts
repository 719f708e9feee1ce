/**
 * The HTTP API and web page over one loaded Pipeline (Hono). Every request is logged as one JSON line; POST
 * bodies are size-limited and validated with zod; pipeline work is gated (in-flight limit -> 503 with
 * Retry-After) and timed out (504). The slot of a timed-out request is held until its work really ends, so the
 * gate keeps counting the CPU it still uses.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { DataError } from "../data/errors.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import { createGate } from "./gate.ts";
import { memoryReport, watchGc } from "./memory.ts";
import { openApiDocument } from "./openapi.ts";
import { CheckRequest, describeIssue, NarrativesRequest, VerifyRequest } from "./schemas.ts";
import { CSP, WEB_DIR, webFile } from "./web.ts";

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
}

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
    process.stderr.write(`${JSON.stringify({ level: "error", path: c.req.path, error: String(err) })}\n`);
    return c.json({ error: "internal error" }, 500);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));

  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => c.json({ error: `request body is larger than ${maxBody} bytes` }, 413),
    }),
  );

  async function body<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
    let value: unknown;
    try {
      value = JSON.parse(await req.text());
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
        throw new HttpError(404, `no abstract "${req.abstract_id}" in the index`);
      return c.json(await gated(() => pipeline.verify(req.claim, req.abstract_id)));
    }
    return c.json(
      await gated(() => pipeline.verify(req.claim, { abstract: req.abstract, title: req.title })),
    );
  });

  app.get("/v1/abstracts/:id", (c) => {
    const id = c.req.param("id");
    const found = pipeline.abstract(id);
    if (!found) throw new HttpError(404, `no abstract "${id}" in the index`);
    return c.json(found);
  });

  app.get("/healthz", (c) =>
    c.json({
      status: "ok" as const,
      abstracts: pipeline.abstracts,
      verifier: pipeline.verifierName,
      retrieval: pipeline.retrieval,
      in_flight: gate.inFlight,
      pid: process.pid,
      memory: memoryReport(),
    }),
  );
  app.get("/openapi.json", (c) => c.json(doc));

  app.get("*", async (c) => {
    const file = await webFile(c.req.path, options.webDir ?? WEB_DIR);
    if (!file) return c.json({ error: `no route GET ${c.req.path}` }, 404);
    return c.body(file.body, 200, {
      "content-type": file.type,
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
    });
  });

  return app;
}
