/**
 * The short fuzz run (the long one: `npm run fuzz`): each reader and the HTTP API fed random and mutated inputs
 * (test/fuzz-targets.ts) with a fixed seed; no crash, no hang, no 5xx, every refusal names its file.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import fc from "fast-check";
import { createApp } from "../src/server/app.ts";
import { apiProperty, newTally, READER_TARGETS, readerProperty } from "./fuzz-targets.ts";
import { type TestPipeline, testPipeline } from "./pipeline-fixtures.ts";
import { tempDir } from "./retrieval-fixtures.ts";

const SEED = 25;
const RUNS = 40;
/** Parquet cases are cheap; 200 reach case 126, a file hyparquet spins on (now refused before it is decoded). */
const runsOf = (name: string) => (name.includes("Parquet") ? 200 : RUNS);

for (const t of READER_TARGETS)
  test(`fuzz ${t.name}: ${runsOf(t.name)} cases, no crash or hang, every refusal a one-line error naming the file`, async () => {
    const tally = newTally();
    await fc.assert(readerProperty(t, tempDir("cc-fuzz-"), tally), { numRuns: runsOf(t.name), seed: SEED });
    assert.equal(tally.cases, runsOf(t.name));
    // Both outcomes are reached: the inputs are neither all valid nor all rejected at the first byte.
    assert.ok(tally.accepted > 0 && tally.refused > 0, JSON.stringify(tally));
  });

let t: TestPipeline;
before(async () => {
  t = await testPipeline();
});
after(() => t.cleanup());

test(`fuzz the HTTP API: ${RUNS * 2} requests, no 5xx, every error JSON with its text`, async () => {
  const app = createApp(t.pipeline, { log: () => {} });
  const tally = newTally();
  await fc.assert(apiProperty(app, tally), { numRuns: RUNS * 2, seed: SEED });
  assert.ok(tally.accepted > 0 && tally.refused > 0, JSON.stringify(tally));
});

test("found by fuzzing: POST /v1/verify with a JSON body that is not an object is a 400, not a 500", async () => {
  const app = createApp(t.pipeline, { log: () => {} });
  for (const body of ["0", '"x"', "true"]) {
    const res = await app.request("/v1/verify", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(res.status, 400, body);
    assert.equal(((await res.json()) as { error: string }).error, "body: a JSON object is expected");
  }
});
