import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const run = promisify(execFile);
const cli = (args: string[], home: string) =>
  run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    env: { ...process.env, CLIMATECHECK_HOME: home },
  });

test("ingest then retrieve end to end: task 1 predictions, bad claims skipped with a message", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  const idx = join(dir, "idx");
  const ing = await cli(["ingest", corpus, "--index", idx, "--no-vectors"], dir);
  assert.match(ing.stderr, /8 added, 0 already indexed, 0 skipped, 8 abstracts/);
  const claims = join(dir, "claims.csv");
  writeFileSync(
    claims,
    `claim_id,claim\nc1,Arctic sea ice is declining fast\nc2,"?!"\nc3,${"warming ".repeat(1000)}\nc4,CO2 levels reached 415 ppm\n`,
  );
  const out = join(dir, "preds.csv");
  const ret = await cli(["retrieve", "--claims", claims, "--index", idx, "--out", out, "--k", "3"], dir);
  assert.match(ret.stderr, /claim c2: claim is empty/);
  assert.match(ret.stderr, /claim c3: claim is 7999 characters; at most 5000/);
  const lines = readFileSync(out, "utf8").trim().split("\n");
  assert.equal(lines[0], "claim_id,abstract_id,rank");
  assert.equal(lines[1], "c1,a1,1");
  assert.equal(lines.filter((l) => l.startsWith("c4,"))[0], "c4,a5,1");
  assert.deepEqual([...new Set(lines.slice(1).map((l) => l.split(",")[0]))], ["c1", "c4"]);
  assert.ok(lines.slice(1).every((l) => Number(l.split(",")[2]) <= 3));
});

test("retrieve on a missing index exits 2 with a clear message", async () => {
  const dir = tempDir();
  const claims = join(dir, "claims.csv");
  writeFileSync(claims, "claim_id,claim\nc1,sea ice\n");
  await assert.rejects(
    cli(["retrieve", "--claims", claims, "--index", join(dir, "none"), "--out", join(dir, "o.csv")], dir),
    (e: { code?: number; stderr?: string }) => e.code === 2 && /not an index/.test(e.stderr ?? ""),
  );
});
