import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { dotRows } from "../src/index/ivf.ts";
import { codeWidth, quantizeQuery, quantizeRows, simdDots } from "../src/index/simd-dots.ts";
import { VectorSet } from "../src/index/vectors.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { tempDir } from "./retrieval-fixtures.ts";

const random = (n: number, seed: number) => {
  const rnd = mulberry32(seed);
  return Float32Array.from({ length: n }, () => rnd() * 2 - 1);
};

test("SIMD kernel: each row's dot product with the query, as the float64 loop gives it to float32 rounding", () => {
  for (const dim of [4, 100, 512]) {
    const rows = 37;
    const k = simdDots((rows * dim + dim + rows) * 4, dim);
    assert.ok(k, "Node 20 has WebAssembly SIMD");
    const data = new Float32Array(k.memory.buffer, 0, rows * dim);
    data.set(random(rows * dim, dim));
    const queryAt = rows * dim * 4;
    const query = new Float32Array(k.memory.buffer, queryAt, dim);
    query.set(random(dim, 7));
    const outAt = queryAt + dim * 4;
    const out = new Float32Array(k.memory.buffer, outAt, rows);
    // Rows 5..36 only: the offsets are honoured and nothing outside them is written.
    out.fill(-99);
    k.dots(queryAt, 5 * dim * 4, rows - 5, dim, outAt + 5 * 4);
    for (let r = 0; r < rows; r++) {
      if (r < 5) assert.equal(out[r], -99);
      else
        assert.ok(
          Math.abs(out[r] - dotRows(query, 0, data, r * dim, dim)) < 1e-4 * Math.sqrt(dim),
          `row ${r}`,
        );
    }
  }
});

/** A VectorSet over random rows, a random query, and the exact dot products of the query with every row. */
function randomSet(n: number, dim: number, seed: number) {
  const data = random(n * dim, seed);
  const path = join(tempDir(), "v.f32");
  writeFileSync(path, new Uint8Array(data.buffer));
  const q = random(dim, seed + 1);
  const exact = [...Array(n).keys()].map((d) => dotRows(q, 0, data, d * dim, dim));
  const top = (k: number) => [...Array(n).keys()].sort((a, b) => exact[b] - exact[a]).slice(0, k);
  return { set: new VectorSet(path, dim, n), data, q, exact, top };
}

test("SIMD kernel is declined for widths that are not a multiple of 4; VectorSet then keeps the exact loop", () => {
  assert.equal(simdDots(1024, 6), null);
  const { set, q, exact, top } = randomSet(50, 6, 3);
  assert.deepEqual(
    set.search(q, 5).map((h) => h.docno),
    top(5),
  );
  assert.equal(set.score(q, 3), exact[3]);
});

test("VectorSet on the SIMD kernel: search and score agree with each other and with the exact ranking", () => {
  const dim = 64;
  const { set, data, q, top } = randomSet(300, dim, 11);
  const hits = set.search(q, 10);
  assert.deepEqual(
    hits.map((h) => h.docno),
    top(10),
  );
  for (const h of hits) assert.equal(set.score(q, h.docno), h.score);
  assert.deepEqual(Array.from(set.vector(17)), Array.from(data.subarray(17 * dim, 18 * dim)));
});

test("int8 kernel: quantised rows and query give each dot product to within 1% of the vectors' norms", () => {
  const dim = 100;
  const rows = 40;
  const width = codeWidth(dim);
  assert.equal(width, 112);
  const k = simdDots(rows * width + rows * 4 + width * 2 + rows * 4, dim);
  assert.ok(k);
  const data = random(rows * dim, 21);
  const buf = k.memory.buffer;
  const codes = new Int8Array(buf, 0, rows * width);
  const scalesAt = rows * width;
  quantizeRows(data, rows, dim, codes, new Float32Array(buf, scalesAt, rows));
  const queryAt = scalesAt + rows * 4;
  const q = random(dim, 22);
  const factor = quantizeQuery(q, new Int16Array(buf, queryAt, width));
  const outAt = queryAt + width * 2;
  k.dotsI8(queryAt, 0, scalesAt, rows, width, outAt);
  const out = new Float32Array(buf, outAt, rows);
  const norm = (x: Float32Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0));
  for (let r = 0; r < rows; r++) {
    const row = data.subarray(r * dim, (r + 1) * dim);
    const exact = dotRows(q, 0, data, r * dim, dim);
    assert.ok(Math.abs(out[r] * factor - exact) < 0.01 * norm(q) * norm(row), `row ${r}`);
  }
  // The padding of each row stays zero, so it adds nothing.
  for (let r = 0; r < rows; r++) for (let j = dim; j < width; j++) assert.equal(codes[r * width + j], 0);
});

test("sums kernel: weighted rows summed in float32 exactly as the JavaScript loop rounds them", () => {
  const dim = 100;
  const count = 60;
  const k = simdDots(count * dim * 4 + 4096 * 13, dim);
  assert.ok(k);
  const buf = k.memory.buffer;
  const matrix = new Float32Array(buf, 0, count * dim);
  matrix.set(random(count * dim, 31).map((x) => x * 3));
  const rnd = mulberry32(32);
  const rowsAt = count * dim * 4;
  const weightsAt = rowsAt + 4096;
  const accAt = weightsAt + 8192;
  for (const n of [0, 1, 7, 400]) {
    // Rows repeat and come in any order; weights are any float64 (custom SIF weights need not be float32).
    const rows = Array.from({ length: n }, () => Math.floor(rnd() * count));
    const weights = rows.map(() => rnd() * 10 - 5);
    new Int32Array(buf, rowsAt, n).set(rows.map((r) => r * dim * 4));
    new Float64Array(buf, weightsAt, n).set(weights);
    const acc = new Float64Array(buf, accAt, dim);
    acc.fill(0);
    k.sums(rowsAt, weightsAt, n, dim, accAt);
    const js = new Float32Array(dim);
    rows.forEach((r, t) => {
      for (let i = 0; i < dim; i++) js[i] += weights[t] * matrix[r * dim + i];
    });
    assert.deepEqual(Float32Array.from(acc), js, `${n} rows`);
    assert.ok(n === 0 || acc.some((x) => x !== 0));
  }
});
