import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { z } from "zod";
import { openChatVerifier } from "../src/verification/backends/chat.ts";
import { ChatClient, ChatError, extractJson } from "../src/verification/chat-client.ts";

/** A loopback server speaking the OpenAI chat completions protocol; `script` decides each reply. */
type Reply = { status?: number; content?: string; delayMs?: number; raw?: string };
let script: (prompt: string, n: number) => Reply = () => ({ content: "{}" });
let requests: { body: Record<string, unknown>; auth?: string }[] = [];
let inFlight = 0;
let maxInFlight = 0;
let baseUrl = "";

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let data = "";
  req.on("data", (c) => {
    data += c;
  });
  req.on("end", async () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = JSON.parse(data) as { messages: { content: string }[] };
    requests.push({ body, auth: req.headers.authorization });
    const reply = script(body.messages.map((m) => m.content).join("\n"), requests.length);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    inFlight--;
    if (res.destroyed) return;
    res.writeHead(reply.status ?? 200, { "content-type": "application/json" });
    res.end(
      reply.raw ??
        JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: reply.content } }] }),
    );
  });
});

before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** Waits for requests left over from an earlier test (a timed-out one still sleeps on the server). */
const reset = async (fn: typeof script) => {
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
  script = fn;
  requests = [];
  maxInFlight = 0;
};

test("chat verifier: prompt lists numbered sentences, answers become verdicts with valid rationale", async () => {
  await reset((prompt) => {
    if (prompt.includes("Claim: Sea ice is growing"))
      return { content: '```json\n{"label": "refutes", "confidence": 0.8, "rationale": [1, 7, 1]}\n```' };
    return { content: '{"label": "Not Enough Information", "confidence": 0.6, "rationale": [0]}' };
  });
  const v = openChatVerifier({ baseUrl, model: "tiny", apiKey: "k", backoffMs: 1 });
  const verdicts = await v.verifyPairs([
    {
      claim: "Sea ice is growing",
      abstract: "Arctic sea ice was measured. Its extent declined by 13% per decade.",
    },
    { claim: "Cats like rain", abstract: "We studied glaciers." },
  ]);
  assert.equal(verdicts[0].label, "Refutes");
  assert.deepEqual(verdicts[0].rationale, [1]);
  assert.ok(Math.abs(verdicts[0].probs.refutes - 0.8) < 1e-9);
  assert.ok(
    Math.abs(verdicts[0].probs.supports + verdicts[0].probs.refutes + verdicts[0].probs.nei - 1) < 1e-9,
  );
  assert.equal(verdicts[1].label, "Not Enough Information");
  assert.deepEqual(verdicts[1].rationale, []);
  const prompt = requests.map((r) => JSON.stringify(r.body)).join();
  assert.match(prompt, /\[1\] Its extent declined by 13% per decade\./);
  assert.equal(requests[0].auth, "Bearer k");
  assert.deepEqual(requests[0].body.response_format, { type: "json_object" });
  assert.equal(requests[0].body.temperature, 0);
});

test("chat client retries 5xx and invalid answers with backoff, then succeeds", async () => {
  await reset((_p, n) => {
    if (n === 1) return { status: 503, raw: "busy" };
    if (n === 2) return { content: "I think it supports it" };
    if (n === 3) return { content: '{"label": "Maybe", "confidence": 0.5}' };
    return { content: '{"label": "Supports", "confidence": 0.9, "rationale": [0]}' };
  });
  const v = openChatVerifier({ baseUrl, model: "tiny", retries: 3, backoffMs: 1 });
  const verdict = await v.verify("CO2 warms the planet", { abstract: "CO2 traps heat." });
  assert.equal(verdict.label, "Supports");
  assert.deepEqual(verdict.rationale, [0]);
  assert.equal(requests.length, 4);
});

test("chat client gives up after its retries with every reason, and does not retry a 400", async () => {
  await reset(() => ({ status: 500, raw: "boom" }));
  const client = new ChatClient({ baseUrl, model: "tiny", retries: 2, backoffMs: 1 });
  await assert.rejects(
    client.complete([{ role: "user", content: "hi" }]),
    (e: unknown) => e instanceof ChatError && e.attempts.length === 3 && /HTTP 500 boom/.test(e.message),
  );
  assert.equal(requests.length, 3);
  await reset(() => ({ status: 400, raw: "bad model" }));
  await assert.rejects(client.complete([{ role: "user", content: "hi" }]), /rejected: HTTP 400 bad model/);
  assert.equal(requests.length, 1);
});

test("chat client times out a slow answer and retries it", async () => {
  await reset((_p, n) => (n === 1 ? { delayMs: 400, content: '{"a": 1}' } : { content: '{"a": 2}' }));
  const client = new ChatClient({ baseUrl, model: "tiny", timeoutMs: 100, retries: 1, backoffMs: 1 });
  const value = await client.completeJson([{ role: "user", content: "x" }], z.object({ a: z.number() }));
  assert.deepEqual(value, { a: 2 });
  assert.equal(requests.length, 2);
});

test("chat client keeps at most `concurrency` requests in flight", async () => {
  await reset(() => ({ delayMs: 20, content: '{"label": "Supports", "confidence": 0.7, "rationale": []}' }));
  const v = openChatVerifier({ baseUrl, model: "tiny", concurrency: 2 });
  const pairs = Array.from({ length: 7 }, (_, i) => ({ claim: `c${i}`, abstract: "A. B." }));
  const verdicts = await v.verifyPairs(pairs);
  assert.equal(verdicts.length, 7);
  assert.equal(requests.length, 7);
  assert.ok(maxInFlight <= 2, `max in flight ${maxInFlight}`);
});

test("extractJson finds the object inside fences or prose", () => {
  assert.deepEqual(extractJson('Sure: {"x": [1, 2]} done'), { x: [1, 2] });
  assert.throws(() => extractJson("no json here"), /no JSON object/);
});
