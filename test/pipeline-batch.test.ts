import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { unzipSync } from "fflate";
import { writeCsv } from "../src/data/tables.ts";
import { BatchInterrupted, type Lane, runBatch } from "../src/pipeline/batch.ts";
import { checkpointPath, predictBatch } from "../src/pipeline/batch-predict.ts";
import { writeSubmissionZip } from "../src/pipeline/submission-zip.ts";
import type { Claim } from "../src/types.ts";

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "batch-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CODES = ["1_1", "2_3", "0_0", "5_1"];
/** A fake task 2 lane: codes from the claim text alone; records every claim it is given. */
function fakeLane(seen: string[], failOn?: string): Lane<Claim, unknown> {
  return {
    async process(items) {
      if (failOn && items.some((c) => c.id === failOn)) throw new Error(`lane failed on ${failOn}`);
      seen.push(...items.map((c) => c.id));
      return items.map((c) => [CODES[c.text.length % CODES.length], CODES[c.text.split(" ").length % 4]]);
    },
    async close() {},
  };
}

async function writeClaims(path: string, n: number, edit = ""): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => [
    `c${i}`,
    `claim number ${i} about ${"warm ".repeat(i % 5)}${edit}`,
  ]);
  await writeCsv(path, ["claim_id", "claim"], rows);
}

const run = (
  claims: string,
  out: string,
  seen: string[],
  extra: Partial<Parameters<typeof predictBatch>[0]> = {},
) =>
  predictBatch({
    task: 2,
    claims,
    out,
    chunkSize: 3,
    openLanes: async () => [fakeLane(seen)],
    ...extra,
  });

/** Runs until `stopAt` items are saved, then aborts; returns the error. */
async function interrupted(claims: string, out: string, stopAt: number): Promise<BatchInterrupted> {
  const abort = new AbortController();
  const err = await run(claims, out, [], {
    signal: abort.signal,
    onProgress: (done) => {
      if (done >= stopAt) abort.abort();
    },
  }).catch((e) => e);
  assert.ok(err instanceof BatchInterrupted, String(err));
  return err;
}

test("an interrupted run, rerun, writes the same bytes as an uninterrupted one and processes only the rest", async () => {
  const claims = join(dir, "claims.csv");
  await writeClaims(claims, 10);
  const whole = join(dir, "whole.csv");
  const s0 = await run(claims, whole, []);
  assert.equal(s0.processed, 10);
  assert.equal(existsSync(checkpointPath(whole)), false);

  const out = join(dir, "resumed.csv");
  const err = await interrupted(claims, out, 3);
  assert.equal(err.done, 3);
  assert.equal(existsSync(out), false, "no final file before the run finishes");
  const lines = (await readFile(checkpointPath(out), "utf8")).trim().split("\n");
  assert.equal(lines.length, 1 + 3, "header + one line per finished claim");

  const seen: string[] = [];
  const s1 = await run(claims, out, seen);
  assert.equal(s1.resumed, 3);
  assert.equal(s1.processed, 7);
  assert.deepEqual(seen, ["c3", "c4", "c5", "c6", "c7", "c8", "c9"]);
  assert.deepEqual(await readFile(out), await readFile(whole));
  assert.equal(existsSync(checkpointPath(out)), false, "checkpoint removed after the final write");
});

test("a torn last checkpoint line (kill mid-write) is dropped and the result is unchanged", async () => {
  const claims = join(dir, "claims-torn.csv");
  await writeClaims(claims, 8);
  const whole = join(dir, "torn-whole.csv");
  await run(claims, whole, []);
  const out = join(dir, "torn.csv");
  await interrupted(claims, out, 6);
  await appendFile(checkpointPath(out), '{"id":"c6","result":["1_');
  const seen: string[] = [];
  const s = await run(claims, out, seen);
  assert.equal(s.resumed, 6);
  assert.deepEqual(seen, ["c6", "c7"]);
  assert.deepEqual(await readFile(out), await readFile(whole));
});

test("a changed input or changed parameters start afresh instead of mixing runs", async () => {
  const claims = join(dir, "claims-changed.csv");
  await writeClaims(claims, 6);
  const out = join(dir, "changed.csv");
  await interrupted(claims, out, 3);
  await writeClaims(claims, 6, "edited");
  const seen: string[] = [];
  const s = await run(claims, out, seen);
  assert.equal(s.resumed, 0);
  assert.equal(seen.length, 6);

  await writeClaims(claims, 6);
  await interrupted(claims, out, 3);
  const s2 = await run(claims, out, [], { fast: true });
  assert.equal(s2.resumed, 0, "another model is another run");
});

test("a failing lane stops the run with its error and keeps the finished chunks", async () => {
  const claims = join(dir, "claims-fail.csv");
  await writeClaims(claims, 7);
  const out = join(dir, "fail.csv");
  await assert.rejects(
    predictBatch({ task: 2, claims, out, chunkSize: 3, openLanes: async () => [fakeLane([], "c4")] }),
    /lane failed on c4/,
  );
  assert.equal(existsSync(out), false);
  const seen: string[] = [];
  const s = await run(claims, out, seen);
  assert.equal(s.resumed, 3);
  assert.deepEqual(seen, ["c3", "c4", "c5", "c6"]);
});

test("with two lanes results are kept in input order whichever lane finishes first", async () => {
  // Lane A holds its first chunk until lane B has finished one, so chunks complete out of order.
  let release: () => void = () => {};
  const bDone = new Promise<void>((r) => {
    release = r;
  });
  const lane = (name: string, hold: boolean): Lane<{ id: string }, string> => ({
    async process(items) {
      if (hold) await bDone;
      else release();
      return items.map((i) => `${i.id}:${name}`);
    },
    async close() {},
  });
  let written: string[] = [];
  const items = Array.from({ length: 6 }, (_, i) => ({ id: `x${i}` }));
  await runBatch({
    items,
    checkpoint: join(dir, "two.partial.jsonl"),
    identity: { params: {}, input: "two" },
    chunkSize: 2,
    openLanes: async () => [lane("A", true), lane("B", false)],
    write: async (r) => {
      written = r;
    },
  });
  assert.deepEqual(
    written.map((w) => w.split(":")[0]),
    items.map((i) => i.id),
  );
  assert.equal(written[0], "x0:A", "the first chunk went to lane A");
  assert.ok(written.some((w) => w.endsWith(":B")));
});

test("--zip writes predictions.zip holding exactly predictions.csv with the output's bytes", async () => {
  const csv = join(dir, "sub", "task1.csv");
  await writeCsv(csv, ["claim_id", "abstract_id", "rank", "label"], [["c,1", "a1", 1, "Supports"]]);
  const zip = await writeSubmissionZip(csv);
  assert.equal(zip, join(dir, "sub", "predictions.zip"));
  const entries = unzipSync(await readFile(zip));
  assert.deepEqual(Object.keys(entries), ["predictions.csv"]);
  assert.deepEqual(Buffer.from(entries["predictions.csv"]), await readFile(csv));
  await writeFile(csv, "claim_id,abstract_id,rank\n");
  assert.deepEqual(
    Buffer.from(unzipSync(await readFile(await writeSubmissionZip(csv)))["predictions.csv"]),
    await readFile(csv),
  );
});

test("a lane with concurrency 3 gets up to 3 chunks at once; results stay in input order", async () => {
  const items = Array.from({ length: 20 }, (_, i) => ({ id: `i${i}` }));
  let inFlight = 0;
  let most = 0;
  const lane: Lane<{ id: string }, string> = {
    concurrency: 3,
    async process(chunk) {
      most = Math.max(most, ++inFlight);
      // Later chunks finish first, as chunks waiting on a pool can.
      await new Promise((r) => setTimeout(r, 30 - Number(chunk[0].id.slice(1))));
      inFlight--;
      return chunk.map((x) => x.id.toUpperCase());
    },
    async close() {},
  };
  let written: string[] = [];
  await runBatch({
    items,
    checkpoint: join(dir, "concurrent.partial.jsonl"),
    identity: { params: {}, input: "x" },
    openLanes: async () => [lane],
    chunkSize: 2,
    write: async (r) => {
      written = r;
    },
  });
  assert.equal(most, 3);
  assert.deepEqual(
    written,
    items.map((x) => x.id.toUpperCase()),
  );
});
