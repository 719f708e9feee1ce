import assert from "node:assert/strict";
import { test } from "node:test";
import { f1At, tuneThreshold, tuneThresholds } from "../src/learning/thresholds.ts";

test("tuneThreshold picks the known best threshold", () => {
  // Positives score 0.35, 0.6, 0.8; negatives 0.1, 0.3, 0.5.
  // t in (0.30, 0.35]: tp 3, fp 1 -> F1 6/7; t in (0.35, 0.5]: tp 2, fp 1, fn 1 -> 4/6; t in (0.5,0.6]: tp 2 fp 0 fn 1 -> 0.8.
  const scores = [0.35, 0.6, 0.8, 0.1, 0.3, 0.5];
  const gold = [true, true, true, false, false, false];
  const grid = [0.2, 0.32, 0.4, 0.55, 0.7, 0.9];
  const best = tuneThreshold(scores, gold, grid);
  assert.equal(best.threshold, 0.32);
  assert.ok(Math.abs(best.f1 - 6 / 7) < 1e-12);
  assert.ok(Math.abs(f1At(scores, gold, 0.55) - 0.8) < 1e-12);
});

test("ties pick the middle of the plateau; no positives picks the top of the grid", () => {
  const scores = [0.9, 0.1];
  const gold = [true, false];
  // Every threshold in (0.1, 0.9] gives F1 1: grid 0.2..0.8 -> middle 0.5.
  assert.equal(tuneThreshold(scores, gold, [0.2, 0.3, 0.5, 0.7, 0.8]).threshold, 0.5);
  assert.equal(tuneThreshold([0.4, 0.2], [false, false], [0.1, 0.5, 0.9]).threshold, 0.9);
});

test("tuneThresholds tunes each class on its own column", () => {
  const scores = [
    [0.9, 0.2],
    [0.6, 0.7],
    [0.1, 0.4],
  ];
  const gold = [
    [true, false],
    [false, true],
    [false, true],
  ];
  const t = tuneThresholds(scores, gold, [0.3, 0.5, 0.8]);
  assert.equal(t[0].threshold, 0.8);
  assert.equal(t[0].f1, 1);
  assert.equal(t[1].threshold, 0.3);
  assert.equal(t[1].f1, 1);
});
