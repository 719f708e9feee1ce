import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { Judge } from "../src/evaluation/ev2r.ts";
import { builtinJudge } from "../src/evaluation/judges/builtin.ts";
import { cachedJudge, judgeCacheFile } from "../src/evaluation/judges/cache.ts";
import type { Label } from "../src/types.ts";
import type { VerifyPair } from "../src/verification/verifier.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-ev2r-judges-"));

test("builtin judge: facts are the abstract sentences; support = P(Supports) at the threshold; one batch per tick", async () => {
  const batches: VerifyPair[][] = [];
  const verifier = {
    name: "fake-verifier",
    async verifyPairs(pairs: readonly VerifyPair[]) {
      batches.push([...pairs]);
      // P(Supports) 0.3 (the threshold: supported, though the label is NEI) when the evidence contains the fact
      // word for word, else 0.29.
      return pairs.map((p) => {
        const supports = p.abstract.includes(p.claim) ? 0.3 : 0.29;
        const label: Label = "Not Enough Information";
        return { label, confidence: 0.7, probs: { supports, refutes: 0, nei: 1 - supports }, rationale: [] };
      });
    },
  };
  const judge = builtinJudge(verifier);
  assert.match(judge.name, /^builtin-sentences-v2\+fake-verifier$/);
  assert.match(builtinJudge(verifier, 0.5).name, /^builtin-sentences-v2@0.5\+fake-verifier$/);
  assert.match(judge.approximation ?? "", /approximation/);
  assert.deepEqual(await judge.atomicFacts({ abstract: "Seas rose 3 mm per year. Ice melted." }), [
    "Seas rose 3 mm per year.",
    "Ice melted.",
  ]);
  // Given sentence boundaries win over splitting.
  assert.deepEqual(await judge.atomicFacts({ abstract: "A. B.", sentences: ["A. B."] }), ["A. B."]);
  const [a, b, empty] = await Promise.all([
    judge.supported(["Ice melted.", "Seas fell."], { abstract: "Ice melted. Seas rose." }),
    judge.supported(["Seas rose."], { abstract: "Ice melted. Seas rose." }),
    judge.supported([], { abstract: "x" }),
  ]);
  assert.deepEqual(a, [true, false]);
  assert.deepEqual(b, [true]);
  assert.deepEqual(empty, []);
  assert.equal(batches.length, 1, "calls of the same tick share one verifier batch");
  assert.equal(batches[0].length, 3);
  assert.equal(batches[0][0].claim, "Ice melted.");
  assert.equal(batches[0][0].abstract, "Ice melted. Seas rose.");
});

test("builtin judge: a verifier failure rejects every call of its batch", async () => {
  const judge = builtinJudge({
    name: "broken",
    verifyPairs: async () => {
      throw new Error("model missing");
    },
  });
  const results = await Promise.allSettled([
    judge.supported(["a"], { abstract: "a" }),
    judge.supported(["b"], { abstract: "b" }),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["rejected", "rejected"],
  );
});

/** A judge that counts its calls; facts = words, support = the evidence contains the word. */
function countingJudge(name = "count-v1") {
  const calls = { facts: 0, supported: 0 };
  const judge: Judge = {
    name,
    async atomicFacts(doc) {
      calls.facts++;
      return doc.abstract.split(" ");
    },
    async supported(facts, evidence) {
      calls.supported++;
      return facts.map((f) => evidence.abstract.split(" ").includes(f));
    },
  };
  return { judge, calls };
}

test("judge cache: same question asked once per run and never again in a later run; answers identical", async () => {
  const file = join(dir, "cache-a.jsonl");
  const { judge, calls } = countingJudge();
  const first = cachedJudge(judge, file);
  const doc = { abstract: "warming ice sea" };
  const [f1, f2] = await Promise.all([first.atomicFacts(doc), first.atomicFacts(doc)]);
  assert.deepEqual(f1, ["warming", "ice", "sea"]);
  assert.deepEqual(f2, f1);
  const s1 = await first.supported(["ice", "fire"], doc);
  assert.deepEqual(s1, [true, false]);
  assert.deepEqual(calls, { facts: 1, supported: 1 }, "in-flight duplicates are asked once");
  // A different fact list or evidence is a different question.
  await first.supported(["fire", "ice"], doc);
  await first.supported(["ice", "fire"], { abstract: "fire" });
  assert.deepEqual(calls, { facts: 1, supported: 3 });

  // A later run (new process = new wrapper over the same file) asks nothing.
  const second = countingJudge();
  const again = cachedJudge(second.judge, file);
  assert.deepEqual(await again.atomicFacts(doc), f1);
  assert.deepEqual(await again.supported(["ice", "fire"], doc), s1);
  assert.deepEqual(second.calls, { facts: 0, supported: 0 });
  assert.deepEqual(again.stats, { hits: 2, misses: 0 });

  // Another judge name (model or prompt version) does not reuse these answers.
  const other = countingJudge("count-v2");
  await cachedJudge(other.judge, file).atomicFacts(doc);
  assert.equal(other.calls.facts, 1);
});

test("judge cache: a torn last line is skipped and later records stay readable", async () => {
  const file = join(dir, "cache-b.jsonl");
  const { judge, calls } = countingJudge();
  await cachedJudge(judge, file).atomicFacts({ abstract: "one two" });
  appendFileSync(file, '{"k":"deadbeef","v":["trunc'); // a crash mid-write
  const next = cachedJudge(judge, file);
  assert.deepEqual(await next.atomicFacts({ abstract: "one two" }), ["one", "two"]);
  await next.atomicFacts({ abstract: "three" });
  assert.equal(calls.facts, 2);
  const third = countingJudge();
  const reread = cachedJudge(third.judge, file);
  assert.deepEqual(await reread.atomicFacts({ abstract: "three" }), ["three"]);
  assert.equal(third.calls.facts, 0, "the record written after the torn line is intact");
  assert.equal(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.startsWith('{"k":"deadbeef"')).length,
    1,
  );
});

test("judge cache: a cached answer of the wrong shape is asked again", async () => {
  const file = join(dir, "cache-c.jsonl");
  const { judge, calls } = countingJudge();
  const c = cachedJudge(judge, file);
  await c.supported(["a", "b"], { abstract: "a" });
  // Rewrite the stored answer with one verdict too few: it must not be trusted.
  const line = readFileSync(file, "utf8").trim();
  const rec = JSON.parse(line) as { k: string; v: boolean[] };
  appendFileSync(file, `${JSON.stringify({ k: rec.k, v: [true] })}\n`);
  assert.deepEqual(await cachedJudge(judge, file).supported(["a", "b"], { abstract: "a" }), [true, false]);
  assert.equal(calls.supported, 2);
});

test("judge cache file: one file per judge name, names made file-safe", () => {
  assert.equal(
    judgeCacheFile("llm-ev2r-llm-v1+m@http://x:1/v1", "/c"),
    "/c/llm-ev2r-llm-v1+m@http___x_1_v1.jsonl",
  );
});
