import assert from "node:assert/strict";
import { test } from "node:test";
import { pairedDifference } from "../src/retrieval/experiment.ts";
import type { LabelledPair, Task1Prediction } from "../src/types.ts";

const gold: LabelledPair[] = [
  { claimId: "c1", abstractId: "a1", label: "Supports" },
  { claimId: "c2", abstractId: "a2", label: "Refutes" },
  { claimId: "c3", abstractId: "a3", label: "Supports" },
  // No relevant abstract: scored by neither system.
  { claimId: "c4", abstractId: "a4", label: "Not Enough Information" },
];
const ranked = (pairs: [string, string][]): Task1Prediction[] =>
  pairs.map(([claimId, abstractId]) => ({ claimId, abstractId, rank: 1 }));
const all = ranked([
  ["c1", "a1"],
  ["c2", "a2"],
  ["c3", "a3"],
  ["c4", "a9"],
]);
const one = ranked([
  ["c1", "a1"],
  ["c2", "a9"],
  ["c3", "a9"],
  ["c4", "a4"],
]);

test("paired difference: mean per-claim gain over claims with a relevant abstract, same claims for both", () => {
  const d = pairedDifference(all, one, gold, "recall_at_5");
  assert.equal(d.value, 2 / 3);
  // Every per-claim difference is 0 or 1, so every resample's mean lies in [0, 1].
  assert.ok(d.low >= 0 && d.high <= 1 && d.low < d.value && d.value <= d.high, JSON.stringify(d));
  const back = pairedDifference(one, all, gold, "recall_at_5");
  // (+ 0 turns -0 into 0.)
  assert.deepEqual(
    [back.value, back.low, back.high],
    [-d.value, -d.high, -d.low].map((x) => x + 0),
  );
  // A system against itself: no difference in any resample.
  assert.deepEqual(pairedDifference(all, all, gold, "ndcg_at_10"), { value: 0, low: 0, high: 0 });
});
