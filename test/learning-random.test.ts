import assert from "node:assert/strict";
import { test } from "node:test";
import { mulberry32, shuffle } from "../src/learning/random.ts";
import { hashSplit, hashUnit, linkedGroups } from "../src/learning/split.ts";

test("mulberry32 is reproducible, seed-dependent and in [0, 1)", () => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const c = mulberry32(43);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(
    xs.slice(0, 5),
    Array.from({ length: 5 }, () => b()),
  );
  assert.notEqual(xs[0], c());
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test("shuffle is a seeded permutation and leaves its input alone", () => {
  const items = Array.from({ length: 20 }, (_, i) => i);
  const s1 = shuffle(items, mulberry32(7));
  const s2 = shuffle(items, mulberry32(7));
  assert.deepEqual(s1, s2);
  assert.notDeepEqual(s1, items);
  assert.deepEqual(
    [...s1].sort((a, b) => a - b),
    items,
  );
  assert.deepEqual(
    items,
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test("hashSplit is deterministic, salt-dependent and roughly proportional", () => {
  const ids = Array.from({ length: 4000 }, (_, i) => `claim-${i}`);
  const sides = ids.map((id) => hashSplit(id, 0.2, "s1"));
  assert.deepEqual(
    sides,
    ids.map((id) => hashSplit(id, 0.2, "s1")),
  );
  const dev = sides.filter((s) => s === "dev").length / ids.length;
  assert.ok(Math.abs(dev - 0.2) < 0.03, `dev fraction ${dev}`);
  const other = ids.map((id) => hashSplit(id, 0.2, "s2"));
  assert.ok(other.some((s, i) => s !== sides[i]));
  assert.ok(ids.every((id) => hashSplit(id, 0, "s1") === "train" && hashSplit(id, 1, "s1") === "dev"));
  assert.throws(() => hashSplit("x", 1.5));
  // Known value of the first 48 bits of sha1(":abc") / 2^48: guards the recipe (a changed recipe reshuffles splits).
  assert.equal(hashUnit("abc", ""), 0.6863638127469365);
});

test("linkedGroups joins rows that share any key, named by the smallest key whatever the row order", () => {
  const rows = [["c3", "a1"], ["c1", "a2"], ["c2", "a1"], ["c4"], ["c5", "a2"], ["c6", "a3"], ["c7", "a3"]];
  assert.deepEqual(linkedGroups(rows), ["a1", "a2", "a1", "c4", "a2", "a3", "a3"]);
  assert.deepEqual(linkedGroups([...rows].reverse()), ["a3", "a3", "a2", "c4", "a1", "a2", "a1"]);
  // A chain joins through a shared middle key.
  assert.deepEqual(
    linkedGroups([
      ["x", "k"],
      ["k", "y"],
      ["y", "z"],
    ]),
    ["k", "k", "k"],
  );
  assert.throws(() => linkedGroups([[]]), /at least one key/);
});
