import assert from "node:assert/strict";
import { test } from "node:test";
import {
  expectedCalibrationError,
  fitTemperature,
  softmaxWithTemperature,
  temperatureNll,
} from "../src/learning/calibration.ts";
import { mulberry32 } from "../src/learning/random.ts";

test("ECE matches a hand computation", () => {
  // Bin [0.9,1.0): two examples conf 0.9 and 0.95, one right -> |0.5 - 0.925| = 0.425, weight 2/4.
  // Bin [0.6,0.7): two examples conf 0.6 and 0.6, both right -> |1 - 0.6| = 0.4, weight 2/4.
  const probs = [
    [0.9, 0.1],
    [0.05, 0.95],
    [0.6, 0.4],
    [0.4, 0.6],
  ];
  const labels = [0, 0, 0, 1];
  const ece = expectedCalibrationError(probs, labels, 10);
  assert.ok(Math.abs(ece - (0.5 * 0.425 + 0.5 * 0.4)) < 1e-9, `ece ${ece}`);
});

test("temperature scaling recovers the temperature that generated the labels", () => {
  // Labels drawn from softmax(logits / 2): the fitted T should be near 2 and beat T = 1 on NLL.
  const rng = mulberry32(11);
  const logits: number[][] = [];
  const labels: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const z = [rng() * 8 - 4, rng() * 8 - 4, rng() * 8 - 4];
    const p = softmaxWithTemperature(z, 2);
    const u = rng();
    labels.push(u < p[0] ? 0 : u < p[0] + p[1] ? 1 : 2);
    logits.push(z);
  }
  const t = fitTemperature(logits, labels);
  assert.ok(Math.abs(t - 2) < 0.3, `T ${t}`);
  assert.ok(temperatureNll(logits, labels, t) < temperatureNll(logits, labels, 1));
  const p = softmaxWithTemperature([1, 2, 3], 0.5);
  assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-12);
});
