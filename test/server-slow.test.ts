/**
 * Slow and abusive clients on `serve`: headers sent too slowly, a body never finished, an idle kept-alive
 * connection are each closed by the server; past the connection cap sockets are closed at once; and real requests
 * are answered while slow connections are held open. (Bounds are generous waits, not timing figures: those are in
 * BENCHMARKS.md, Reliability.)
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, test } from "node:test";
import { type RunningServer, startServer } from "../src/server/start.ts";
import { type TestPipeline, testPipeline } from "./pipeline-fixtures.ts";

let t: TestPipeline;
let server: RunningServer;
const CAP = 12;

before(async () => {
  t = await testPipeline();
  server = await startServer(t.pipeline, {
    port: 0,
    log: () => {},
    headersTimeoutMs: 400,
    bodyTimeoutMs: 600,
    idleTimeoutMs: 300,
    maxConnections: CAP,
  });
});
after(async () => {
  await server.close();
  await t.cleanup();
});

/** An open socket, what it received, and a promise of its close (rejects after `within` ms: the server never closed it). */
async function open(
  within = 10_000,
): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(server.port, "127.0.0.1");
  await new Promise<void>((r, reject) => socket.once("connect", r).once("error", reject));
  let data = "";
  socket.on("data", (d) => {
    data += d;
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("the server did not close the connection"));
    }, within);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return { socket, received: () => data, closed };
}

const health = async () => (await fetch(`${server.url}/healthz`)).status;

test("headers sent a byte at a time are cut off with 408", async () => {
  const c = await open();
  const head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  let i = 0;
  const drip = setInterval(() => {
    if (!c.socket.destroyed) c.socket.write(head[i++ % head.length]);
  }, 50);
  await c.closed.finally(() => clearInterval(drip));
  assert.match(c.received(), /^HTTP\/1\.1 408/);
});

test("a body that never finishes is cut off", async () => {
  const c = await open();
  c.socket.write(
    'POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"claim": "',
  );
  await c.closed;
  assert.doesNotMatch(c.received(), /^HTTP\/1\.1 200/);
});

test("a kept-alive connection left idle is closed after its answer", async () => {
  const c = await open();
  c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  await c.closed;
  assert.match(c.received(), /^HTTP\/1\.1 200/);
});

test("slow connections up to the cap do not stop real requests; past the cap sockets are closed at once", async () => {
  const slow = await Promise.all(Array.from({ length: CAP - 2 }, () => open()));
  for (const s of slow) s.socket.write("GET /healthz HTTP/1.1\r\n");
  assert.equal(await health(), 200);
  const check = await fetch(`${server.url}/v1/check`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ claim: "Sea level rise is accelerating", k: 2 }),
  });
  assert.equal(check.status, 200);
  // Fill the cap, then one more: it is closed without an answer.
  const fill = await Promise.all([open(), open()]);
  const over = await open();
  await over.closed;
  assert.equal(over.received(), "");
  // The slow ones are cut by the headers timeout, and the server answers again.
  await Promise.all([...slow, ...fill].map((s) => s.closed));
  assert.equal(await health(), 200);
});
