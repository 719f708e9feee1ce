import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { assertDevSplit, evaluate, shareGain } from "../bench/narratives.ts";
import { verdict } from "../bench/narratives-check-model.ts";
import { PACKAGE_ROOT } from "../src/data/paths.ts";
import { type ContrastSplit, type ContrastText, contrastSplit } from "../src/narratives/data.ts";

/** A written text whose subject hashes to `split`, stored as `stored` (default: the same). */
function textIn(split: ContrastSplit, stored: ContrastSplit = split): ContrastText {
  for (let i = 0; ; i++) {
    const subject = `subject-${i}`;
    if (contrastSplit("1_1", subject) === split)
      return {
        id: `t-${split}-${i}`,
        text: "Arctic sea ice is growing again.",
        codes: ["1_1"],
        kind: "contrarian",
        targetCode: "1_1",
        subject,
        split: stored,
      };
  }
}

test("assertDevSplit passes dev texts and refuses a test-split one, by its stored split or its subject's hash", () => {
  assert.doesNotThrow(() => assertDevSplit([textIn("dev"), textIn("dev")]));
  assert.throws(() => assertDevSplit([textIn("dev"), textIn("test")]), /t-test-\d+ is not of the dev split/);
  assert.throws(() => assertDevSplit([textIn("train")]), /not of the dev split/);
  // Stored as dev but its subject hashes to test: still refused.
  assert.throws(() => assertDevSplit([textIn("test", "dev")]), /not of the dev split/);
});

test("evaluate refuses written test texts before predicting anything", async () => {
  let calls = 0;
  const predict = async (texts: string[]) => {
    calls++;
    return texts.map(() => ({ codes: ["0_0"], narrative: 0, first: "0_0" }));
  };
  await assert.rejects(evaluate(predict, [], [], [], [textIn("test")]), /not of the dev split/);
  assert.equal(calls, 0);
});

test("no benchmark loads the written test split", () => {
  const dir = join(PACKAGE_ROOT, "bench");
  const callers = readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .filter((f) => readFileSync(join(dir, f), "utf8").includes("loadContrastTest("));
  assert.deepEqual(callers, []);
});

test("shareGain is paired: the difference of the shares on the same resamples", () => {
  const a = [true, true, false, false, true, false, false, false];
  const b = [false, true, false, false, true, false, false, false];
  const g = shareGain(a, b);
  assert.equal(g.value, 1 / 8);
  // Paired: the gain is never negative, since a is true wherever b is.
  assert.ok(g.low >= 0 && g.high > g.low, `${g.low} ${g.high}`);
  assert.deepEqual(shareGain(a, a), { value: 0, low: 0, high: 0 });
  assert.throws(() => shareGain(a, b.slice(1)), /8 vs 7 items/);
});

test("verdict: on the point figure, and whether the whole interval agrees", () => {
  assert.equal(verdict({ value: 0.05, low: 0.02, high: 0.07 }, 0.08, "low"), "met (whole interval)");
  assert.equal(
    verdict({ value: 0.05, low: 0.02, high: 0.12 }, 0.08, "low"),
    "met at the point; the interval crosses it",
  );
  assert.equal(verdict({ value: 0.2, low: 0.15, high: 0.25 }, 0.08, "low"), "**not met** (whole interval)");
  assert.equal(
    verdict({ value: 0.85, low: 0.8, high: 0.92 }, 0.9, "high"),
    "**not met** at the point; the interval reaches it",
  );
  assert.equal(verdict({ value: 0.95, low: 0.91, high: 0.98 }, 0.9, "high"), "met (whole interval)");
});
