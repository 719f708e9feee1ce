import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { unzipSync } from "fflate";
import { readTask1Predictions } from "../src/data/climatecheck.ts";
import { ingest } from "../src/index/ingest.ts";
import { checkpointPath } from "../src/pipeline/batch-predict.ts";
import { CLAIMS_CSV, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const exec = promisify(execFile);
const CLI = ["--import", "tsx", "src/cli/main.ts"];
const dir = tempDir("cli-predict-");

/** A loopback chat verifier: Refutes when the prompt mentions the sun, else Supports; `stallAt` never answers. */
function chatServer() {
  const state = { requests: 0, stallAt: Number.POSITIVE_INFINITY, onStall: () => {} };
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => {
      data += c;
    });
    req.on("end", () => {
      if (++state.requests >= state.stallAt) {
        state.onStall();
        return; // never answered: the client is killed while waiting
      }
      const prompt = JSON.stringify(JSON.parse(data).messages);
      const answer = /\bsun\b/.test(prompt)
        ? { label: "Refutes", confidence: 0.9, rationale: [0] }
        : { label: "Supports", confidence: 0.8, rationale: [0] };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ choices: [{ message: { role: "assistant", content: JSON.stringify(answer) } }] }),
      );
    });
  });
  return { server, state };
}
const servers = [chatServer(), chatServer()];

const env = () => ({ ...process.env, CLIMATECHECK_HOME: join(dir, "home") });
const task1Args = (out: string, more: string[] = [], server = 0) => [
  ...CLI,
  "predict",
  "--task",
  "1",
  "--claims",
  join(dir, "claims.csv"),
  "--out",
  out,
  "--index",
  join(dir, "index"),
  "--k",
  "2",
  "--config",
  join(dir, `chat${server}.json`),
  ...more,
];

before(async () => {
  await writeFile(join(dir, "claims.csv"), CLAIMS_CSV);
  await ingest(writeCorpus(dir), join(dir, "index"), { vectors: [] });
  for (const [i, { server }] of servers.entries()) {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as AddressInfo).port;
    await writeFile(
      join(dir, `chat${i}.json`),
      JSON.stringify({ backend: "chat", baseUrl: `http://127.0.0.1:${port}/v1`, model: "tiny", retries: 0 }),
    );
  }
});
after(async () => {
  for (const { server } of servers) {
    server.closeAllConnections();
    server.close();
  }
  await rm(dir, { recursive: true, force: true });
});

// The three runs are independent (own outputs, own chat servers), so they run side by side.
describe("climatecheck predict", { concurrency: true }, () => {
  test("predict --task 1: top k verified abstracts per claim, same file from one lane or two worker threads, and the zip", async () => {
    const one = join(dir, "one", "task1.csv");
    const two = join(dir, "two", "task1.csv");
    await Promise.all([
      exec(process.execPath, task1Args(one, ["--workers", "0", "--zip"]), { env: env() }),
      exec(process.execPath, task1Args(two, ["--workers", "2", "--chunk-size", "2"]), { env: env() }),
    ]);
    const preds = await readTask1Predictions(one);
    assert.equal(preds.length, 6 * 2);
    assert.deepEqual(
      preds.filter((p) => p.claimId === "c3").map((p) => [p.abstractId, p.rank, p.label]),
      [
        ["a3", 1, "Refutes"],
        [preds.find((p) => p.claimId === "c3" && p.rank === 2)?.abstractId, 2, "Refutes"],
      ],
    );
    assert.deepEqual(
      preds.filter((p) => p.claimId === "c1").map((p) => [p.rank, p.label]),
      [
        [1, "Supports"],
        [2, "Supports"],
      ],
    );
    assert.equal(preds.find((p) => p.claimId === "c1" && p.rank === 1)?.abstractId, "a1");
    assert.deepEqual(await readFile(two), await readFile(one));
    const zip = unzipSync(await readFile(join(dir, "one", "predictions.zip")));
    assert.deepEqual(Buffer.from(zip["predictions.csv"]), await readFile(one));
    assert.equal(existsSync(checkpointPath(one)), false);
  });

  test("predict --task 1 killed mid-run resumes from its checkpoint and writes the uninterrupted file", async () => {
    const { state } = servers[1];
    const whole = join(dir, "whole.csv");
    const out = join(dir, "killed.csv");
    const args = task1Args(out, ["--workers", "0", "--chunk-size", "1"], 1);
    // The uninterrupted run (another server, so the request count below is the killed run's alone).
    const uninterrupted = exec(process.execPath, task1Args(whole, ["--workers", "0"]), { env: env() });
    // The 7th verification request (claim 4 of 6, 2 pairs per claim) never answers; the process is killed then.
    state.stallAt = 7;
    const child = spawn(process.execPath, args, { env: env(), stdio: "ignore" });
    const exited = new Promise((r) => child.once("exit", r));
    await new Promise<void>((r) => {
      state.onStall = r;
    });
    child.kill("SIGKILL");
    await exited;
    state.stallAt = Number.POSITIVE_INFINITY;
    assert.equal(existsSync(out), false);
    const lines = (await readFile(checkpointPath(out), "utf8")).trim().split("\n");
    assert.equal(lines.length, 1 + 3, "header + the 3 claims finished before the kill");

    state.requests = 0;
    const { stderr } = await exec(process.execPath, args, { env: env() });
    assert.match(stderr, /3 resumed from the checkpoint/);
    assert.equal(state.requests, 3 * 2, "only the 3 remaining claims are verified");
    await uninterrupted;
    assert.deepEqual(await readFile(out), await readFile(whole));
    assert.equal(existsSync(checkpointPath(out)), false);
  });

  test("predict --task 2 --fast writes what classify --fast writes", async () => {
    const viaPredict = join(dir, "t2-predict.csv");
    const viaClassify = join(dir, "t2-classify.csv");
    const claims = join(dir, "claims.csv");
    await Promise.all([
      exec(
        process.execPath,
        [
          ...CLI,
          "predict",
          "--task",
          "2",
          "--fast",
          "--claims",
          claims,
          "--out",
          viaPredict,
          "--chunk-size",
          "4",
        ],
        { env: env() },
      ),
      exec(process.execPath, [...CLI, "classify", "--fast", "--claims", claims, "--out", viaClassify], {
        env: env(),
      }),
    ]);
    const text = await readFile(viaPredict, "utf8");
    assert.equal(text.trim().split("\n").length, 1 + 6);
    assert.equal(text, await readFile(viaClassify, "utf8"));
  });
});
