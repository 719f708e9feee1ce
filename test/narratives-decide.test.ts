import assert from "node:assert/strict";
import { test } from "node:test";
import {
  codeProbabilities,
  decide,
  type NarrativeScores,
  type Thresholds,
} from "../src/narratives/decide.ts";
import { NARRATIVE_CODES, subCodes } from "../src/taxonomy/cards.ts";

const thresholds: Thresholds = {
  group: [0, 0.5, 0.5, 0.5, 0.5, 0.5],
  code: Object.fromEntries(NARRATIVE_CODES.map((c) => [c, 0.4])),
};

/** narrative = P(narrative); group = P(group | narrative) for groups 1..5. */
function scores(narrative: number, group: number[], code: Record<string, number> = {}): NarrativeScores {
  return { narrative, group: [0, ...group], code };
}

test("the gate decides: below 0.5 the claim is 0_0 alone, whatever the groups and codes say", () => {
  const clearGroup = scores(0.49, [0.9, 0.05, 0.05, 0, 0], { "1_1": 0.99 });
  assert.deepEqual(decide(clearGroup, thresholds, "group-code"), ["0_0"]);
  assert.deepEqual(decide(scores(0.5, [0.9, 0.05, 0.05, 0, 0], { "1_1": 0.99 }), thresholds, "group-code"), [
    "1_1",
  ]);
});

test("past the gate there is always a narrative: the most likely group when none passes its threshold", () => {
  const s = scores(0.8, [0.3, 0.2, 0.35, 0.1, 0.05], { "3_1": 0.1, "3_2": 0.2 });
  assert.deepEqual(decide(s, thresholds, "group-code"), ["3_0"]);
});

test("a clear group with no fitting sub-code falls back to X_0 (or to the best sub-code as ablation)", () => {
  const s = scores(0.9, [0, 0, 0.9, 0, 0.1], { "3_1": 0.3, "3_2": 0.35, "3_3": 0.2 });
  assert.deepEqual(decide(s, thresholds, "group-code"), ["3_0"]);
  assert.deepEqual(decide(s, thresholds, "argmax"), ["3_2"]);
});

test("several groups and several codes, in taxonomy order, without X_0 beside a sub-code", () => {
  const s = scores(0.7, [0.6, 0, 0, 0, 0.7], { "5_2": 0.5, "5_1": 0.45, "1_6": 0.9 });
  assert.deepEqual(decide(s, thresholds, "group-code"), ["1_6", "5_1", "5_2"]);
});

test("per-code thresholds decide within a group", () => {
  const t: Thresholds = { ...thresholds, code: { ...thresholds.code, "2_1": 0.8, "2_3": 0.1 } };
  const s = scores(1, [0, 1, 0, 0, 0], { "2_1": 0.7, "2_3": 0.2 });
  assert.deepEqual(decide(s, t, "group-code"), ["2_3"]);
});

test("every decision is a valid code set", () => {
  // Random scores: outputs are always taxonomy codes, non-empty, 0_0 alone, no X_0 beside its sub-codes.
  let seed = 1;
  const rnd = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  for (let k = 0; k < 200; k++) {
    const code: Record<string, number> = {};
    for (const c of NARRATIVE_CODES) code[c] = rnd();
    const codes = decide(scores(rnd(), [rnd(), rnd(), rnd(), rnd(), rnd()], code), thresholds, "group-code");
    assert.ok(codes.length > 0);
    assert.ok(codes.every((c) => NARRATIVE_CODES.includes(c)));
    if (codes.includes("0_0")) assert.equal(codes.length, 1);
    for (const g of [1, 2, 3, 4, 5] as const) {
      if (codes.includes(`${g}_0`)) assert.ok(!subCodes(g).some((c) => codes.includes(c)));
    }
  }
});

test("marginal probabilities: P(0_0) = 1 - P(narrative), groups share P(narrative), codes multiply", () => {
  const p = codeProbabilities(scores(0.8, [0.625, 0.125, 0.125, 0.0625, 0.0625], { "1_1": 0.4 }));
  assert.ok(Math.abs(p["0_0"] - 0.2) < 1e-12);
  assert.equal(p["1_0"], 0.5);
  assert.ok(Math.abs(p["1_1"] - 0.2) < 1e-12);
  const groups = ["1_0", "2_0", "3_0", "4_0", "5_0"].reduce((s, c) => s + p[c], 0);
  assert.ok(Math.abs(groups - 0.8) < 1e-12);
  assert.equal(Object.keys(p).length, NARRATIVE_CODES.length);
});
