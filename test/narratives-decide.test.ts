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

function scores(group: number[], code: Record<string, number> = {}): NarrativeScores {
  return { group, code };
}

test("no group over its threshold gives 0_0, alone", () => {
  assert.deepEqual(decide(scores([0.6, 0.1, 0.1, 0.1, 0.05, 0.05]), thresholds, "group-code"), ["0_0"]);
  // Group 0 being likely does not stop a narrative group that passes: 0_0 never comes with other codes.
  const both = decide(scores([0.5, 0.5, 0, 0, 0, 0], { "1_4": 0.9 }), thresholds, "group-code");
  assert.deepEqual(both, ["1_4"]);
});

test("a clear group with no fitting sub-code falls back to X_0 (or to the best sub-code as ablation)", () => {
  const s = scores([0, 0, 0, 0.9, 0, 0.1], { "3_1": 0.3, "3_2": 0.35, "3_3": 0.2 });
  assert.deepEqual(decide(s, thresholds, "group-code"), ["3_0"]);
  assert.deepEqual(decide(s, thresholds, "argmax"), ["3_2"]);
});

test("several groups and several codes, in taxonomy order, without X_0 beside a sub-code", () => {
  const s = scores([0, 0.6, 0, 0, 0, 0.7], { "5_2": 0.5, "5_1": 0.45, "1_6": 0.9 });
  assert.deepEqual(decide(s, thresholds, "group-code"), ["1_6", "5_1", "5_2"]);
});

test("per-code thresholds decide within a group", () => {
  const t: Thresholds = { ...thresholds, code: { ...thresholds.code, "2_1": 0.8, "2_3": 0.1 } };
  const s = scores([0, 0, 1, 0, 0, 0], { "2_1": 0.7, "2_3": 0.2 });
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
    const codes = decide(scores([rnd(), rnd(), rnd(), rnd(), rnd(), rnd()], code), thresholds, "group-code");
    assert.ok(codes.length > 0);
    assert.ok(codes.every((c) => NARRATIVE_CODES.includes(c)));
    if (codes.includes("0_0")) assert.equal(codes.length, 1);
    for (const g of [1, 2, 3, 4, 5] as const) {
      if (codes.includes(`${g}_0`)) assert.ok(!subCodes(g).some((c) => codes.includes(c)));
    }
  }
});

test("marginal code probabilities multiply group and conditional code probabilities", () => {
  const p = codeProbabilities(scores([0.2, 0.5, 0.1, 0.1, 0.05, 0.05], { "1_1": 0.4 }));
  assert.equal(p["0_0"], 0.2);
  assert.equal(p["1_0"], 0.5);
  assert.ok(Math.abs(p["1_1"] - 0.2) < 1e-12);
  assert.equal(Object.keys(p).length, NARRATIVE_CODES.length);
});
