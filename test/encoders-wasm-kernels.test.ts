import assert from "node:assert/strict";
import { test } from "node:test";
import core from "@energetic-ai/core";
import { installFastWasmKernels } from "../src/encoders/wasm-kernels.ts";

// Untyped: the package's typings point at @tensorflow/* modules it bundles but does not install.
const tf = core as unknown as {
  ready(): Promise<void>;
  getKernel(name: string, backend: string): { kernelFunc: unknown } | undefined;
  tensor(values: number[], shape: number[], dtype?: string): { dispose(): void };
  split(
    x: unknown,
    sizes: number[],
    axis: number,
  ): { dataSync(): Float32Array | Int32Array; shape: number[] }[];
  matMul(
    a: unknown,
    b: unknown,
    ta?: boolean,
    tb?: boolean,
  ): { dataSync(): Float32Array | Int32Array; shape: number[] };
};

const values = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => Math.sin(seed + i * 1.37) * 2);

test("the faster SplitV and batched MatMul kernels give the bundled kernels' results", async () => {
  await tf.ready();
  const x = tf.tensor(values(2 * 3 * 10, 1), [2, 3, 10]);
  const xi = tf.tensor(
    values(2 * 6, 2).map((v) => Math.round(v * 100)),
    [2, 6],
    "int32",
  );
  const a = tf.tensor(values(2 * 3 * 4 * 5, 3), [2, 3, 4, 5]);
  const b = tf.tensor(values(2 * 3 * 5 * 6, 4), [2, 3, 5, 6]);
  const bt = tf.tensor(values(2 * 3 * 6 * 5, 5), [2, 3, 6, 5]);
  const at = tf.tensor(values(2 * 3 * 5 * 4, 6), [2, 3, 5, 4]);
  const run = () => ({
    split: tf.split(x, [3, 5, 2], -1).map((t) => [t.shape, [...t.dataSync()]]),
    splitMiddle: tf.split(x, [1, 2], 1).map((t) => [t.shape, [...t.dataSync()]]),
    splitInt: tf.split(xi, [4, 2], 1).map((t) => [t.shape, [...t.dataSync()]]),
    plain: tf.matMul(a, b),
    transB: tf.matMul(a, bt, false, true),
    transA: tf.matMul(at, b, true, false),
    both: tf.matMul(at, bt, true, true),
  });
  const before = run();
  const originals = ["SplitV", "BatchMatMul"].map((k) => tf.getKernel(k, "wasm")?.kernelFunc);
  installFastWasmKernels();
  assert.ok(["SplitV", "BatchMatMul"].every((k, i) => tf.getKernel(k, "wasm")?.kernelFunc !== originals[i]));
  const after = run();
  assert.deepEqual(after.split, before.split);
  assert.deepEqual(after.splitMiddle, before.splitMiddle);
  assert.deepEqual(after.splitInt, before.splitInt);
  for (const key of ["plain", "transB", "transA", "both"] as const) {
    assert.deepEqual(after[key].shape, before[key].shape, key);
    const [p, q] = [after[key].dataSync(), before[key].dataSync()];
    assert.equal(p.length, q.length);
    for (let i = 0; i < p.length; i++)
      assert.ok(Math.abs(p[i] - q[i]) < 1e-4, `${key}[${i}]: ${p[i]} vs ${q[i]}`);
  }
});
