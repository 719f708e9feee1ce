import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ingest } from "../src/index/ingest.ts";
import { type ChatServer, startChatServer } from "./chat-server-fixture.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

let dir = "";
let config = "";

/** A loopback chat model that always answers Supports citing sentence 0. */
let chat: ChatServer | undefined;

before(async () => {
  dir = tempDir("cc-serve-cli-");
  await ingest(writeCorpus(dir), join(dir, "index"));
  chat = await startChatServer(() => ({ label: "Supports", confidence: 0.9, rationale: [0] }));
  config = join(dir, "chat.json");
  await writeFile(config, JSON.stringify({ backend: "chat", baseUrl: chat.baseUrl, model: "t" }));
});
after(async () => {
  chat?.close();
  await rm(dir, { recursive: true, force: true });
});

/** `serve` on `port` against the fixture index and chat config, with stderr piped for its log lines. */
function spawnServe(port: string, workers: string) {
  return spawn(
    process.execPath,
    [
      ...["--import", "tsx", "src/cli/main.ts", "serve", "--port", port],
      ...["--index", join(dir, "index"), "--fast", "--config", config, "--workers", workers],
    ],
    {
      env: { ...process.env, CLIMATECHECK_HOME: join(dir, "home") },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}

for (const workers of [1, 2]) {
  test(`serve --workers ${workers} warms up, logs where it listens, answers the API, logs each request and stops on SIGTERM`, async () => {
    const child = spawnServe("0", String(workers));
    const lines: Record<string, unknown>[] = [];
    let buf = "";
    const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        buf += d.toString();
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          const line = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
          buf = buf.slice(nl + 1);
          lines.push(line);
          if (line.msg === "listening") resolve(line);
        }
      });
      child.once("exit", (code) => reject(new Error(`serve exited early with ${code}`)));
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const info = await listening;
    assert.equal(info.abstracts, 8);
    assert.equal(info.retrieval, "bm25", "the fixture index has no vectors");
    assert.equal(typeof info.warm_up_ms, "number");
    const res = await fetch(`${info.url}/v1/check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ claim: "Arctic sea ice decline", k: 2 }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { evidence: { label: string; abstract_id: string }[] };
    assert.equal(body.evidence.length, 2);
    assert.equal(body.evidence[0].label, "Supports");
    assert.equal(body.evidence[0].abstract_id, "a1");
    // The request's log line follows its response; on a loaded machine it can take a while.
    const logged = () => lines.some((l) => l.method === "POST" && l.path === "/v1/check" && l.status === 200);
    for (let i = 0; i < 100 && !logged(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(logged());
    assert.equal(info.workers, workers === 1 ? undefined : workers);
    // Every worker answers on the one port (the kernel spreads connections; fresh connections reach both).
    const pids = new Set<number>();
    for (let i = 0; i < 20 && pids.size < workers; i++) {
      const h = await fetch(`${info.url}/healthz`, { headers: { connection: "close" } });
      pids.add(((await h.json()) as { pid: number }).pid);
    }
    assert.equal(pids.size, workers);
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
  });
}

test("serve on a port in use says so and exits 2, with one process or several", async () => {
  const busy = createServer(() => {});
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
  const port = (busy.address() as AddressInfo).port;
  try {
    for (const workers of ["1", "2"]) {
      const child = spawnServe(String(port), workers);
      let err = "";
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
      });
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      assert.equal(code, 2, err);
      assert.match(err, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\)`));
      assert.doesNotMatch(err, /Unhandled/);
    }
  } finally {
    busy.close();
  }
});
