import assert from "node:assert/strict";
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
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
  const d = openVectorCache(join(dir, "torn"), "m", 8, { shared: false }); // as another process would
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

test("one process shares one key index per cache file", () => {
  const a = openVectorCache(join(dir, "one"), "m", 8);
  const b = openVectorCache(join(dir, "one"), "m", 8);
  a.putMany([{ key: cacheKey("m", "x"), vector: vec(1) }]);
  b.getMany([]);
  assert.equal(b.size, 1);
  a.close();
  // Still open through b after a closed.
  assert.deepEqual(b.getMany([cacheKey("m", "x")])[0], vec(1));
  assert.throws(() => a.getMany([cacheKey("m", "x")]), /closed/);
  b.close();
});

test("vector cache stays within maxBytes and evicts what was not used since the last rotation", () => {
  const record = 4 + 20 + 8 * 4 + 4;
  const max = 10 * record;
  const c = openVectorCache(join(dir, "bounded"), "m", 8, { maxBytes: max });
  const key = (i: number) => cacheKey("m", `t${i}`);
  for (let i = 0; i < 35; i++) {
    c.putMany([{ key: key(i), vector: vec(i) }]);
    // Keep t0 in use: every lookup copies it forward when it sits in the previous generation.
    assert.deepEqual(c.getMany([key(0)])[0], vec(0));
    assert.ok(c.size <= 10, `size ${c.size} after ${i + 1} puts`);
    assert.ok(statSync(c.file).size <= max);
    assert.ok(!existsSync(`${c.file}.old`) || statSync(`${c.file}.old`).size <= max);
  }
  const got = c.getMany(Array.from({ length: 35 }, (_, i) => key(i)));
  assert.deepEqual(got[0], vec(0), "the recently used t0 survived every rotation");
  assert.equal(got[1], undefined, "t1, unused, was evicted");
  assert.deepEqual(got[34], vec(34), "the newest is there");
  for (let i = 0; i < 35; i++) if (got[i]) assert.deepEqual(got[i], vec(i)); // never a wrong vector
  assert.ok(got.filter(Boolean).length <= 20, "at most two generations");
  c.close();
});

test("a cache in another process follows a rotation and never returns a wrong vector", () => {
  const record = 4 + 20 + 8 * 4 + 4;
  const a = openVectorCache(join(dir, "rot"), "m", 8, { maxBytes: 4 * record, shared: false });
  const b = openVectorCache(join(dir, "rot"), "m", 8, { maxBytes: 4 * record, shared: false });
  const key = (i: number) => cacheKey("m", `r${i}`);
  for (let i = 0; i < 4; i++) a.putMany([{ key: key(i), vector: vec(i) }]);
  assert.deepEqual(b.getMany([key(3)])[0], vec(3));
  for (let i = 4; i < 10; i++) a.putMany([{ key: key(i), vector: vec(i) }]); // two rotations by a
  const got = b.getMany(Array.from({ length: 10 }, (_, i) => key(i)));
  for (let i = 0; i < 10; i++) if (got[i]) assert.deepEqual(got[i], vec(i));
  assert.deepEqual(got[9], vec(9));
  assert.equal(got[0], undefined);
  // b writes to the file a reads now.
  b.putMany([{ key: key(99), vector: vec(99) }]);
  assert.deepEqual(a.getMany([key(99)])[0], vec(99));
  a.close();
  b.close();
});
