import assert from "node:assert/strict";
import { test } from "node:test";
import { trainLogistic } from "../src/learning/logistic.ts";
import { Mlp } from "../src/learning/mlp.ts";
import { mulberry32 } from "../src/learning/random.ts";

/** XOR on noisy points of the four quadrants: label 1 when the signs of the two coordinates differ. */
function xor(n: number, seed: number) {
  const rng = mulberry32(seed);
  const x: Float32Array[] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = rng() < 0.5 ? -1 : 1;
    const b = rng() < 0.5 ? -1 : 1;
    x.push(Float32Array.of(a + (rng() - 0.5) * 0.6, b + (rng() - 0.5) * 0.6));
    y.push(a !== b ? 1 : 0);
  }
  return { x, y };
}

const accuracy = (score: (x: Float32Array) => number, data: { x: Float32Array[]; y: number[] }) =>
  data.x.filter((xi, i) => (score(xi) >= 0 ? 1 : 0) === data.y[i]).length / data.x.length;

const options = { seed: 3, hidden: 8, epochs: 60, learningRate: 0.02, batch: 16 };

test("MLP learns XOR, which a logistic regression cannot", () => {
  const train = xor(400, 1);
  const held = xor(200, 2);
  const net = Mlp.train(train.x, train.y, options);
  assert.ok(accuracy((x) => net.decision(x), held) >= 0.95, "MLP accuracy on held-out XOR");
  const linear = trainLogistic(train.x, train.y, 2, { kind: "binary", classes: 2, l2: 1e-4 });
  assert.ok(accuracy((x) => linear.decision(x)[0], held) <= 0.7, "a linear model is near chance on XOR");
});

test("MLP training is deterministic for a seed, and the seed matters", () => {
  const { x, y } = xor(200, 4);
  const a = Mlp.train(x, y, options);
  const b = Mlp.train(x, y, options);
  assert.deepEqual(a.toJSON(), b.toJSON());
  const c = Mlp.train(x, y, { ...options, seed: 4 });
  assert.notDeepEqual(a.toJSON().w1, c.toJSON().w1);
});

test("MLP sample weights steer the fit: zero-weight examples are ignored", () => {
  const { x, y } = xor(300, 5);
  // Flip the labels of half the rows but give them no weight: the fit must still learn the true XOR.
  const flipped = y.map((v, i) => (i % 2 ? 1 - v : v));
  const weights = y.map((_, i) => (i % 2 ? 0 : 1));
  const net = Mlp.train(x, flipped, { ...options, sampleWeights: weights });
  assert.ok(accuracy((v) => net.decision(v), xor(200, 6)) >= 0.95);
});

test("MLP JSON round trip gives identical outputs; bad shapes are refused", () => {
  const { x, y } = xor(200, 7);
  const net = Mlp.train(x, y, options);
  const back = Mlp.fromJSON(JSON.parse(JSON.stringify(net.toJSON())));
  for (const xi of xor(50, 8).x) assert.equal(back.decision(xi), net.decision(xi));
  assert.throws(() => Mlp.fromJSON({ ...net.toJSON(), hidden: 9 }), /w1/);
  assert.throws(() => net.decision(Float32Array.of(1, 2, 3)), /input has 3 values/);
});
