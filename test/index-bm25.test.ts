import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Bm25Builder, Bm25Index, indexTerms, kthLargest, topHits } from "../src/index/bm25.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { tempDir } from "./retrieval-fixtures.ts";

/** Docs over a Zipf-like vocabulary, so some lists are long (where pruning matters) and some short. */
async function zipfIndex(docs: number, seed = 7): Promise<{ index: Bm25Index; vocab: string[] }> {
  const rnd = mulberry32(seed);
  const vocab = Array.from({ length: 400 }, (_, i) => `w${i}`);
  const word = () => vocab[Math.min(vocab.length - 1, Math.floor(1 / (rnd() + 0.0025)) - 1)];
  const b = new Bm25Builder();
  for (let d = 0; d < docs; d++) {
    const title = Array.from({ length: 1 + Math.floor(rnd() * 6) }, word).join(" ");
    const abs = Array.from({ length: 10 + Math.floor(rnd() * 120) }, word).join(" ");
    b.add(title, abs);
  }
  const dir = join(tempDir(), "bm25");
  mkdirSync(dir);
  await b.write(dir);
  return { index: new Bm25Index(dir), vocab };
}

test("MaxScore search returns exactly the exhaustive top k (same docs, same scores, same order)", async () => {
  const { index, vocab } = await zipfIndex(3000);
  const rnd = mulberry32(11);
  let pruned = 0;
  for (let q = 0; q < 60; q++) {
    const words = Array.from(
      { length: 2 + Math.floor(rnd() * 8) },
      () => vocab[Math.floor(rnd() ** 2 * 300)],
    );
    const query = index.queryTerms(words.join(" "));
    for (const k of [1, 10, 100, 1000]) {
      const fast = index.search(query, k);
      const fastRead = index.lastPostings;
      const exact = index.search(query, k, true);
      if (fastRead < index.lastPostings) pruned++;
      assert.deepEqual(fast, exact, `query ${words.join(" ")}, k ${k}`);
    }
  }
  assert.ok(pruned > 0, "pruning never skipped a posting");
});

test("search scores equal the whole-document field score; tf above 255 is capped, not wrapped", async () => {
  const b = new Bm25Builder();
  b.add("ice", `${"ice ".repeat(300)}sheet`);
  b.add("sea ice", "arctic sea ice extent");
  b.add("", "ocean heat");
  const dir = join(tempDir(), "bm25");
  mkdirSync(dir);
  await b.write(dir);
  const index = new Bm25Index(dir);
  const query = index.queryTerms("sea ice");
  const hits = index.search(query, 10);
  assert.deepEqual(
    hits.map((h) => h.docno),
    [1, 0],
  );
  const fields = index.fieldScores(
    query,
    hits.map((h) => h.docno),
  );
  for (const [i, h] of hits.entries()) assert.ok(Math.abs(h.score - fields[i].all) < 1e-9);
  assert.ok(fields[1].abstract > 0 && fields[1].title > 0);
  assert.deepEqual(indexTerms("The ice of the sea"), ["ice", "sea"]);
});

test("kthLargest and topHits agree with a full sort", () => {
  const rnd = mulberry32(3);
  const score = Float32Array.from({ length: 5000 }, () => Math.round(rnd() * 500));
  const ids = Array.from({ length: score.length }, (_, i) => i);
  const sorted = ids.slice().sort((a, b) => score[b] - score[a] || a - b);
  for (const k of [1, 7, 100, 4999, 5000]) {
    assert.equal(kthLargest(score, ids, ids.length, k), score[sorted[k - 1]]);
    assert.deepEqual(
      topHits(ids, ids.length, score, k).map((h) => h.docno),
      sorted.slice(0, k),
    );
  }
  assert.deepEqual(topHits(ids, ids.length, score, 0), []);
});

test("field scores of many docs at once (unsorted, repeated) equal those of each doc alone", async () => {
  const { index, vocab } = await zipfIndex(2000, 5);
  const rnd = mulberry32(13);
  for (let q = 0; q < 20; q++) {
    const query = index.queryTerms(
      Array.from({ length: 6 }, () => vocab[Math.floor(rnd() ** 2 * 300)]).join(" "),
    );
    const docs = Array.from({ length: 300 }, () => Math.floor(rnd() * 2000));
    docs.push(docs[0], 0, 1999);
    const alone = docs.map((d) => index.fieldScores(query, [d])[0]);
    assert.deepEqual(index.fieldScores(query, docs), alone);
    assert.ok(alone.some((f) => f.all > 0));
  }
});
