import assert from "node:assert/strict";
import { test } from "node:test";
import { LogisticModel, trainLogistic } from "../src/learning/logistic.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { fitStandardiser, standardise } from "../src/learning/standardise.ts";

/** Three Gaussian blobs in 2-D, well apart. */
function blobs(n: number, seed: number) {
  const rng = mulberry32(seed);
  const centres = [
    [0, 4],
    [4, -2],
    [-4, -2],
  ];
  const x: Float32Array[] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 3;
    x.push(Float32Array.of(centres[c][0] + rng() - 0.5, centres[c][1] + rng() - 0.5));
    y.push(c);
  }
  return { x, y };
}

const argmax = (p: ArrayLike<number>) => {
  let b = 0;
  for (let k = 1; k < p.length; k++) if (p[k] > p[b]) b = k;
  return b;
};

test("multinomial LR separates three blobs; probabilities sum to 1", () => {
  const { x, y } = blobs(90, 1);
  const m = trainLogistic(x, y, 2, { kind: "multinomial", classes: 3, l2: 1e-3 });
  const test = blobs(30, 2);
  test.x.forEach((xi, i) => {
    const p = m.predictProba(xi);
    assert.equal(p.length, 3);
    assert.ok(Math.abs(p.reduce((s, v) => s + v, 0) - 1) < 1e-5);
    assert.equal(argmax(p), test.y[i]);
    assert.ok(p[test.y[i]] > 0.9);
  });
});

test("binary LR on sparse features learns which word carries the label, and is deterministic", () => {
  // Feature 0 = "melting" (positive), 1 = "growing" (negative), 2 = noise present everywhere.
  const x = [];
  const y = [];
  for (let i = 0; i < 40; i++) {
    const pos = i % 2 === 0;
    x.push({ indices: [pos ? 0 : 1, 2], values: [1, 0.5] });
    y.push(pos ? 1 : 0);
  }
  const m = trainLogistic(x, y, 3, { kind: "binary", classes: 2, l2: 1e-2 });
  assert.ok(m.weights[0] > 0.5 && m.weights[1] < -0.5, `weights ${Array.from(m.weights)}`);
  assert.ok(m.predictProba({ indices: [0], values: [1] })[1] > 0.8);
  assert.ok(m.predictProba({ indices: [1], values: [1] })[1] < 0.2);
  const m2 = trainLogistic(x, y, 3, { kind: "binary", classes: 2, l2: 1e-2 });
  assert.deepEqual(Array.from(m2.weights), Array.from(m.weights));
});

test("a stronger L2 penalty shrinks the weights", () => {
  const { x, y } = blobs(60, 3);
  const weak = trainLogistic(x, y, 2, { kind: "multinomial", classes: 3, l2: 1e-3 });
  const strong = trainLogistic(x, y, 2, { kind: "multinomial", classes: 3, l2: 1 });
  const norm = (w: Float32Array) => Math.hypot(...w);
  assert.ok(norm(strong.weights) < norm(weak.weights) / 2);
});

test("class weights move the decision towards the rare class", () => {
  // Overlapping 1-D data: 90 negatives around 0, 10 positives around 1.
  const rng = mulberry32(5);
  const x: Float32Array[] = [];
  const y: number[] = [];
  for (let i = 0; i < 100; i++) {
    const pos = i < 10;
    x.push(Float32Array.of((pos ? 1 : 0) + (rng() - 0.5) * 2));
    y.push(pos ? 1 : 0);
  }
  const plain = trainLogistic(x, y, 1, { kind: "binary", classes: 2, l2: 1e-3 });
  const balanced = trainLogistic(x, y, 1, { kind: "binary", classes: 2, l2: 1e-3, classWeight: "balanced" });
  const probe = Float32Array.of(0.5);
  assert.ok(plain.predictProba(probe)[1] < 0.5);
  assert.ok(balanced.predictProba(probe)[1] > plain.predictProba(probe)[1] + 0.2);
  // Sample weights that upweight the positives have the same direction of effect.
  const sw = y.map((c) => (c === 1 ? 9 : 1));
  const weighted = trainLogistic(x, y, 1, { kind: "binary", classes: 2, l2: 1e-3, sampleWeights: sw });
  assert.ok(Math.abs(weighted.predictProba(probe)[1] - balanced.predictProba(probe)[1]) < 0.05);
});

test("JSON round trip keeps predictions", () => {
  const { x, y } = blobs(30, 4);
  const m = trainLogistic(x, y, 2, { kind: "multinomial", classes: 3, l2: 1e-2 });
  const back = LogisticModel.fromJSON(JSON.parse(JSON.stringify(m.toJSON())));
  assert.deepEqual(Array.from(back.predictProba(x[0])), Array.from(m.predictProba(x[0])));
  assert.deepEqual(Array.from(back.weights), Array.from(m.weights));
});

test("bad labels and shapes are rejected", () => {
  assert.throws(() => trainLogistic([Float32Array.of(1)], [2], 1, { kind: "binary", classes: 2, l2: 0 }));
  assert.throws(() => trainLogistic([Float32Array.of(1)], [0, 1], 1, { kind: "binary", classes: 2, l2: 0 }));
});

test("standardiser centres and scales, constant features map to 0", () => {
  const rows = [Float32Array.of(1, 5), Float32Array.of(3, 5)];
  const s = fitStandardiser(rows);
  assert.deepEqual(s.mean, [2, 5]);
  assert.deepEqual(Array.from(standardise(rows[0], s)), [-1, 0]);
  assert.deepEqual(Array.from(standardise(rows[1], s)), [1, 0]);
});
