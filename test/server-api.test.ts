import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Pipeline } from "../src/pipeline/pipeline.ts";
import type { CheckResult } from "../src/pipeline/result.ts";
import { createApp, type RequestLog } from "../src/server/app.ts";
import {
  AbstractRecordSchema,
  CheckRequest,
  CheckResultSchema,
  HealthResponse,
  NarrativesResponse,
  PairVerdictSchema,
} from "../src/server/schemas.ts";
import { startServer } from "../src/server/start.ts";
import { type TestPipeline, testPipeline } from "./pipeline-fixtures.ts";

let t: TestPipeline;
const logs: RequestLog[] = [];
let app: ReturnType<typeof createApp>;

before(async () => {
  t = await testPipeline();
  app = createApp(t.pipeline, { log: (e) => logs.push(e) });
});
after(async () => {
  await t.cleanup();
});

const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
const inFlight = async (a: ReturnType<typeof createApp>) =>
  ((await (await a.request("/healthz")).json()) as { in_flight: number }).in_flight;

const post = (path: string, body: unknown, a = app) =>
  a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

test("POST /v1/check returns a CheckResult that matches its schema", async () => {
  logs.length = 0;
  const res = await post("/v1/check", { claim: "Solar irradiance explains warming since 1950", k: 2 });
  assert.equal(res.status, 200);
  const r = CheckResultSchema.parse(await res.json()) as CheckResult;
  assert.equal(r.evidence.length, 2);
  assert.equal(r.evidence[0].abstract_id, "a3");
  assert.equal(r.evidence[0].label, "Refutes");
  assert.deepEqual(logs.length, 1);
  assert.deepEqual(
    { method: logs[0].method, path: logs[0].path, status: logs[0].status },
    { method: "POST", path: "/v1/check", status: 200 },
  );
  assert.ok(logs[0].ms >= 0 && !Number.isNaN(Date.parse(logs[0].time)));
});

test("POST /v1/check: a claim not in English is answered as out of scope, with a caution and no lean", async () => {
  const res = await post("/v1/check", { claim: "El nivel del mar está subiendo más rápido que nunca", k: 2 });
  assert.equal(res.status, 200);
  const r = CheckResultSchema.parse(await res.json()) as CheckResult;
  assert.deepEqual([r.scope.in_scope, r.scope.english], [false, false]);
  assert.equal(r.summary.lean, "out_of_scope");
  assert.equal(r.summary.lean_confidence, 0);
  assert.equal(r.caution.needs_human_review, true);
  assert.match(r.caution.reason ?? "", /does not look like English/);
  assert.deepEqual([r.narratives, r.p_narrative], [[], null]);
  const n = await post("/v1/narratives", { claim: "El nivel del mar está subiendo más rápido que nunca" });
  const nr = NarrativesResponse.parse(await n.json());
  assert.deepEqual([nr.scope.in_scope, nr.narratives, nr.p_narrative], [false, [], null]);
  // An English climate claim is in scope (this test pipeline has no climate model: p_climate is null).
  const ok = CheckResultSchema.parse(
    await (await post("/v1/check", { claim: "Solar irradiance explains warming since 1950", k: 2 })).json(),
  ) as CheckResult;
  assert.deepEqual([ok.scope.in_scope, ok.scope.p_climate], [true, null]);
});

test("POST /v1/verify by id and by text, /v1/narratives and GET /v1/abstracts/:id", async () => {
  const byId = await post("/v1/verify", { claim: "Solar irradiance explains warming", abstract_id: "a3" });
  assert.equal(byId.status, 200);
  const v = PairVerdictSchema.parse(await byId.json());
  assert.deepEqual([v.abstract_id, v.label, v.rationale_indices], ["a3", "Refutes", [0]]);

  const byText = await post("/v1/verify", {
    claim: "Reefs recover slowly",
    abstract: "Reefs recover slowly between bleaching events.",
    title: "Reefs",
  });
  assert.equal(byText.status, 200);
  const w = PairVerdictSchema.parse(await byText.json());
  assert.deepEqual([w.abstract_id, w.title, w.label], [null, "Reefs", "Supports"]);

  const unknown = await post("/v1/verify", { claim: "x y", abstract_id: "zzz" });
  assert.equal(unknown.status, 404);
  assert.match(await errorOf(unknown), /no abstract "zzz"/);

  const n = await post("/v1/narratives", { claim: "Scientists fudge the models" });
  assert.equal(n.status, 200);
  const nn = NarrativesResponse.parse(await n.json());
  assert.deepEqual(
    nn.narratives.map((x) => x.code),
    ["5_1"],
  );

  const a = await app.request("/v1/abstracts/a2");
  assert.equal(a.status, 200);
  assert.equal(AbstractRecordSchema.parse(await a.json()).title, "Sea level rise");
  assert.equal((await app.request("/v1/abstracts/none")).status, 404);
});

test("bad input gets 400 with a message naming the problem", async () => {
  const cases: [unknown, RegExp][] = [
    ["{not json", /must be a JSON object/],
    [{}, /^claim: /],
    [{ claim: "" }, /^claim: claim is empty/],
    [{ claim: "   " }, /^claim: claim is empty/],
    [{ claim: 42 }, /^claim: .*expected string/],
    [{ claim: "CO2 is rising", k: "5" }, /^k: .*expected number/],
    [{ claim: "CO2 is rising", k: 0 }, /^k: /],
    [{ claim: "CO2 is rising", k: 2.5 }, /^k: /],
    [{ claim: "CO2 is rising", extra: 1 }, /extra/],
    [{ claim: "?!" }, /no words/],
    [{ claim: "x".repeat(5001) }, /^claim: claim is longer than 5000/],
  ];
  for (const [body, message] of cases) {
    const res = await post("/v1/check", body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 40));
    assert.match(await errorOf(res), message);
  }
  const verify: [unknown, RegExp][] = [
    [{ claim: "CO2 is rising" }, /give abstract_id or abstract/],
    [{ claim: "CO2 is rising", abstract_id: "a1", abstract: "t" }, /not both/],
    [{ claim: "CO2 is rising", abstract: " " }, /^abstract: abstract is empty/],
    [{ claim: "CO2 is rising", abstract_id: 7 }, /^abstract_id: .*expected string/],
  ];
  for (const [body, message] of verify) {
    const res = await post("/v1/verify", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(await errorOf(res), message);
  }
});

test("a body over the limit gets 413, also over a real socket", async () => {
  const big = { claim: `CO2 ${"a".repeat(70 * 1024)}` };
  const res = await post("/v1/check", big);
  assert.equal(res.status, 413);
  assert.match(await errorOf(res), /larger than 65536 bytes/);
  const server = await startServer(t.pipeline, { port: 0, log: () => {} });
  try {
    const r = await fetch(`${server.url}/v1/check`, { method: "POST", body: JSON.stringify(big) });
    assert.equal(r.status, 413);
  } finally {
    await server.close();
  }
});

/** The test pipeline, with check waiting until `open()` is called. */
function blocked(): { pipeline: Pipeline; open(): void; started: Promise<void> } {
  let open = () => {};
  let started = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const startedP = new Promise<void>((r) => {
    started = r;
  });
  const pipeline: Pipeline = {
    ...t.pipeline,
    async check(claim, options) {
      started();
      await gate;
      return t.pipeline.check(claim, options);
    },
  };
  return { pipeline, open, started: startedP };
}

test("more checks in flight than the limit get 503 with Retry-After; the slot frees when work ends", async () => {
  const b = blocked();
  const limited = createApp(b.pipeline, { maxInFlight: 1, retryAfterSeconds: 2, log: () => {} });
  const first = post("/v1/check", { claim: "Sea level is rising" }, limited);
  await b.started;
  const second = await post("/v1/check", { claim: "Sea level is rising" }, limited);
  assert.equal(second.status, 503);
  assert.equal(second.headers.get("retry-after"), "2");
  assert.match(await errorOf(second), /too many requests/);
  assert.equal(await inFlight(limited), 1);
  b.open();
  assert.equal((await first).status, 200);
  assert.equal((await post("/v1/check", { claim: "Sea level is rising" }, limited)).status, 200);
});

test("a request that outlives the timeout gets 504 and keeps its slot until its work ends", async () => {
  const b = blocked();
  const slow = createApp(b.pipeline, { timeoutMs: 50, maxInFlight: 1, log: () => {} });
  const res = await post("/v1/check", { claim: "Sea level is rising" }, slow);
  assert.equal(res.status, 504);
  assert.match(await errorOf(res), /longer than 50 ms/);
  assert.equal((await post("/v1/check", { claim: "Sea level is rising" }, slow)).status, 503);
  b.open();
  // The slot frees when the abandoned work settles, a few ticks after it is let go.
  for (let i = 0; i < 100 && (await inFlight(slow)) !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await inFlight(slow), 0);
});

test("GET /healthz, /openapi.json (3.1, schemas from zod), the page, and 404 for unknown routes", async () => {
  const { memory, ...h } = (await (await app.request("/healthz")).json()) as {
    memory: { rss_mb: number; heap_used_mb: number; major_gcs: number };
  };
  assert.deepEqual(h, {
    status: "ok",
    abstracts: 8,
    verifier: "rules",
    retrieval: "bm25",
    backends: { narratives: "builtin", retrieval: "bm25", verification: "rules" },
    in_flight: 0,
    pid: process.pid,
    corpus: { name: "corpus.jsonl", abstracts: 8, builtin: false, note: null },
    profile: null,
  });
  assert.ok(memory.rss_mb > 0 && memory.heap_used_mb > 0 && Number.isInteger(memory.major_gcs));
  // serve --profile: the profile's name and hub models, as the Health schema describes them.
  const profile = {
    name: "light-cpu",
    models: [
      { stage: "verification", repo: "Xenova/nli-deberta-v3-xsmall", revision: "09d5f42", dtype: "q8" },
    ],
  };
  const withProfile = (await (
    await createApp(t.pipeline, { log: () => {}, profile }).request("/healthz")
  ).json()) as { profile: unknown };
  assert.deepEqual(withProfile.profile, profile);
  assert.ok(HealthResponse.safeParse(withProfile).success);

  const res = await app.request("/openapi.json");
  assert.equal(res.status, 200);
  const doc = JSON.parse(await res.text());
  assert.equal(doc.openapi, "3.1.0");
  for (const p of ["/v1/check", "/v1/verify", "/v1/narratives", "/v1/abstracts/{id}", "/healthz"])
    assert.ok(doc.paths[p], p);
  const check = doc.components.schemas.CheckRequest;
  assert.deepEqual(check.required, ["claim"]);
  assert.equal(check.properties.k.maximum, 50);
  assert.equal(check.additionalProperties, false);
  const refs = JSON.stringify(doc.paths).match(/#\/components\/schemas\/\w+/g) ?? [];
  for (const r of refs) assert.ok(doc.components.schemas[r.split("/").at(-1) ?? ""], r);
  const result = doc.components.schemas.CheckResult;
  assert.deepEqual(Object.keys(result.properties), Object.keys(CheckResultSchema.shape));
  assert.deepEqual(
    result.properties.evidence.items.required.sort(),
    ["abstract_id", "confidence", "label", "p_nei", "p_refutes", "p_supports", "rank", "rationale"]
      .concat([
        "rationale_indices",
        "retrieval_score",
        "sentences",
        "title",
        "title_raw",
        "relevance",
        "about_claim",
      ])
      .sort(),
  );
  assert.ok(CheckRequest.safeParse({ claim: "x", k: 3 }).success);

  const page = await app.request("/");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /text\/html/);
  assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'/);
  assert.match(await page.text(), /<script type="module" src="\/app\.js"/);
  assert.equal((await app.request("/app.js")).status, 200);
  assert.equal((await app.request("/../package.json")).status, 404);
  assert.equal((await app.request("/nope")).status, 404);
});

test("a known path with another method gets 405 and Allow; a body that is not JSON gets 415", async () => {
  const cases: [string, string, string][] = [
    ["GET", "/v1/check", "POST"],
    ["PUT", "/v1/verify", "POST"],
    ["DELETE", "/v1/narratives", "POST"],
    ["POST", "/v1/abstracts/a1", "GET, HEAD"],
    ["POST", "/healthz", "GET, HEAD"],
    ["DELETE", "/openapi.json", "GET, HEAD"],
    ["POST", "/", "GET, HEAD"],
  ];
  for (const [method, path, allow] of cases) {
    const res = await app.request(path, { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow, `${method} ${path}`);
    assert.match(await errorOf(res), new RegExp(`^${method} is not allowed on ${path}; use ${allow}$`));
  }
  // The right methods still work, unknown paths are still 404.
  assert.equal((await app.request("/healthz", { method: "HEAD" })).status, 200);
  assert.equal((await app.request("/v1/nothing", { method: "POST" })).status, 404);

  const claim = JSON.stringify({ claim: "Sea level is rising" });
  for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
    const headers: Record<string, string> = type ? { "content-type": type } : {};
    const res = await app.request("/v1/check", { method: "POST", headers, body: claim });
    assert.equal(res.status, 415, String(type));
    assert.match(await errorOf(res), /must be JSON sent as Content-Type: application\/json/);
  }
  for (const type of ["application/json; charset=utf-8", "application/merge-patch+json"]) {
    const res = await app.request("/v1/check", {
      method: "POST",
      headers: { "content-type": type },
      body: claim,
    });
    assert.equal(res.status, 200, type);
  }
});

test("error messages quote at most 200 characters of the request", async () => {
  const long = "z".repeat(5000);
  const quoted = (message: string) => Math.max(0, ...(message.match(/z+/g) ?? []).map((m) => m.length));
  const messages = [
    await errorOf(await post("/v1/check", { claim: "Sea level is rising", [long]: 1 })),
    await errorOf(await post("/v1/verify", { claim: "Sea level is rising", abstract_id: "a1", [long]: 1 })),
    await errorOf(await post("/v1/verify", { claim: "Sea level is rising", abstract_id: long })),
    await errorOf(await app.request(`/v1/abstracts/${long}`)),
    await errorOf(await app.request(`/${long}`)),
    await errorOf(
      await app.request("/v1/check", { method: "POST", headers: { "content-type": long }, body: "{}" }),
    ),
  ];
  for (const m of messages) {
    assert.ok(quoted(m) <= 200 && quoted(m) >= 190, `${quoted(m)}: ${m.slice(0, 80)}`);
    assert.match(m, /… \(5\d{3} characters\)/);
  }
  assert.match(messages[0], /^body: unknown field "z{199}… \(5002 characters\)$/);
});

test("CORS is off by default; --cors ORIGIN allows that origin, preflight included", async () => {
  const origin = "https://example.org";
  const plain = await post("/v1/check", { claim: "Sea level is rising" });
  assert.equal(plain.headers.get("access-control-allow-origin"), null);
  const open = createApp(t.pipeline, { cors: origin, log: () => {} });
  const res = await open.request("/v1/check", {
    method: "POST",
    headers: { origin, "content-type": "application/json" },
    body: JSON.stringify({ claim: "Sea level is rising" }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), origin);
  const preflight = await open.request("/v1/check", {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type",
    },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
  assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /content-type/i);
});

test("the OpenAPI document states the 5,000-character claim limit on every request", async () => {
  const doc = JSON.parse(await (await app.request("/openapi.json")).text());
  const s = doc.components.schemas;
  for (const claim of [s.CheckRequest.properties.claim, s.NarrativesRequest.properties.claim])
    assert.equal(claim.maxLength, 5000);
  for (const alt of s.VerifyRequest.anyOf) assert.equal(alt.properties.claim.maxLength, 5000);
  assert.match(s.CheckRequest.properties.claim.description, /at most 5000 characters/);
  assert.equal(doc.paths["/v1/check"].post.responses["415"].description.length > 0, true);
  assert.ok(doc.paths["/v1/check"].post.responses["405"]);
});

test("titles come readable (TeX markup cleaned as on the page), the corpus's own in title_raw", async () => {
  const raw = "Warming of 2{\\deg}C in M\\'artir's $CO_2$ record";
  const res = await post("/v1/verify", {
    claim: "Solar irradiance explains warming since 1950",
    abstract: "Changes in solar irradiance cannot explain warming since 1950.",
    title: raw,
  });
  assert.equal(res.status, 200);
  const v = PairVerdictSchema.parse(await res.json());
  assert.equal(v.title, "Warming of 2°C in Mártir's CO₂ record");
  assert.equal(v.title_raw, raw);
  const check = CheckResultSchema.parse(
    await (await post("/v1/check", { claim: "Solar irradiance explains warming since 1950", k: 1 })).json(),
  );
  assert.deepEqual(
    [check.evidence[0].title, check.evidence[0].title_raw],
    ["Solar activity and climate", "Solar activity and climate"],
  );
  const record = AbstractRecordSchema.parse(await (await app.request("/v1/abstracts/a3")).json());
  assert.deepEqual(
    [record.title, record.title_raw],
    ["Solar activity and climate", "Solar activity and climate"],
  );
});

test("a body that is not valid UTF-8 gets 400 naming the byte, instead of a silently changed claim", async () => {
  const head = new TextEncoder().encode('{"claim": "Sea level ');
  // 0xff is never UTF-8; then a character cut after its first byte.
  for (const [bad, at] of [
    [Uint8Array.of(0xff), head.length],
    [Uint8Array.of(0xe2, 0x82), head.length],
  ] as const) {
    const body = new Uint8Array([...head, ...bad, ...new TextEncoder().encode(' rise"}')]);
    const res = await app.request("/v1/check", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(res.status, 400);
    assert.equal(
      await errorOf(res),
      `request body is not valid UTF-8 at byte ${at} (from 0); send JSON encoded as UTF-8`,
    );
  }
  // A U+FFFD sent as UTF-8 is a character like any other; the bad byte after it is still found.
  const ok = new TextEncoder().encode('{"claim": "Sea level \uFFFD rise", "k": 1}');
  assert.equal(
    (
      await app.request("/v1/check", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ok,
      })
    ).status,
    200,
  );
  const both = new Uint8Array([...new TextEncoder().encode('{"claim": "\uFFFD'), 0xc3, 0x28]);
  const res = await app.request("/v1/narratives", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: both,
  });
  assert.equal(
    await errorOf(res),
    "request body is not valid UTF-8 at byte 14 (from 0); send JSON encoded as UTF-8",
  );
});
