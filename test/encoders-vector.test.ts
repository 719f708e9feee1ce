import assert from "node:assert/strict";
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { cosine, dot, normalizeInPlace } from "../src/encoders/vector.ts";
import { cacheKey, openVectorCache } from "../src/encoders/vector-cache.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-vec-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("dot, cosine and normalizeInPlace", () => {
  assert.equal(dot([1, 2, 3], [4, 5, 6]), 32);
  assert.ok(Math.abs(cosine([1, 0], [1, 1]) - Math.SQRT1_2) < 1e-12);
  assert.equal(cosine([2, 0], [-3, 0]), -1);
  assert.equal(cosine([0, 0], [1, 1]), 0);
  assert.deepEqual([...normalizeInPlace(new Float32Array([3, 4]))], [0.6000000238418579, 0.800000011920929]);
  assert.throws(() => dot([1], [1, 2]));
});

const vec = (seed: number, dim = 8) => Float32Array.from({ length: dim }, (_, i) => Math.sin(seed * 7.1 + i));

test("cache keys depend on model and text", () => {
  assert.notDeepEqual(cacheKey("m1", "a"), cacheKey("m2", "a"));
  assert.notDeepEqual(cacheKey("m1", "a"), cacheKey("m1", "b"));
  assert.deepEqual(cacheKey("m1", "a"), cacheKey("m1", "a"));
});

test("vector cache round-trips exactly and sees records another writer appended", () => {
  const a = openVectorCache(join(dir, "shared"), "m", 8);
  const b = openVectorCache(join(dir, "shared"), "m", 8);
  a.putMany([{ key: cacheKey("m", "x"), vector: vec(1) }]);
  b.putMany([{ key: cacheKey("m", "y"), vector: vec(2) }]);
  const [x, y, z] = a.getMany([cacheKey("m", "x"), cacheKey("m", "y"), cacheKey("m", "z")]);
  assert.deepEqual(x, vec(1));
  assert.deepEqual(y, vec(2));
  assert.equal(z, undefined);
  assert.equal(a.size, 2);
  a.close();
  b.close();
});

test("vector cache skips a torn record in the middle and a corrupt tail", () => {
  const c = openVectorCache(join(dir, "torn"), "m", 8);
  c.putMany([{ key: cacheKey("m", "first"), vector: vec(3) }]);
  const record = statSync(c.file).size;
  c.putMany([{ key: cacheKey("m", "torn"), vector: vec(4) }]);
  // Simulate a crash mid-write: keep only half of the second record, then a later writer appends a good one.
  const fd = openSync(c.file, "r+");
  ftruncateSync(fd, record + Math.floor(record / 2));
  closeSync(fd);
  const d = openVectorCache(join(dir, "torn"), "m", 8);
  d.putMany([{ key: cacheKey("m", "after"), vector: vec(5) }]);
  const tail = openSync(d.file, "a");
  writeSync(tail, Buffer.from("garbage tail"));
  closeSync(tail);
  const [first, torn, afterTorn] = d.getMany([
    cacheKey("m", "first"),
    cacheKey("m", "torn"),
    cacheKey("m", "after"),
  ]);
  assert.deepEqual(first, vec(3));
  assert.equal(torn, undefined);
  assert.deepEqual(afterTorn, vec(5));
  c.close();
  d.close();
});
