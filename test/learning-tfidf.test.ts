import assert from "node:assert/strict";
import { test } from "node:test";
import { concatSparse, dot, l2Norm, sparseFromDense } from "../src/learning/sparse.ts";
import { analyze, TfidfVectorizer } from "../src/learning/tfidf.ts";

test("analyze makes word n-grams from the tokenizer and padded char n-grams within words", () => {
  assert.deepEqual(analyze("Ice isn't melting", { analyzer: "word", ngram: [1, 2] }), [
    "ice",
    "isn't",
    "melting",
    "ice isn't",
    "isn't melting",
  ]);
  assert.deepEqual(analyze("CO2", { analyzer: "char", ngram: [4, 5] }), [" co2", "co2 ", " co2 "]);
});

test("tfidf: min-df vocabulary, smoothed idf, sublinear tf and unit norm", () => {
  const docs = ["ice ice ice melting", "ice growing", "sun cycles"];
  const v = TfidfVectorizer.fit(docs, { analyzer: "word", ngram: [1, 1], minDf: 1, sublinearTf: true });
  assert.equal(v.dim, 5);
  assert.equal(v.terms[0], "ice"); // highest df first
  const x = v.transform("ice ice ice melting unknownword");
  assert.ok(Math.abs(l2Norm(x) - 1) < 1e-6);
  // Hand computation: idf(ice) = ln(4/3)+1, idf(melting) = ln(4/2)+1; tf(ice) = 1 + ln 3.
  const wIce = (1 + Math.log(3)) * (Math.log(4 / 3) + 1);
  const wMelt = 1 * (Math.log(2) + 1);
  const norm = Math.hypot(wIce, wMelt);
  const iIce = v.terms.indexOf("ice");
  const iMelt = v.terms.indexOf("melting");
  const got = new Map(Array.from(x.indices, (i, k) => [i, x.values[k]]));
  assert.ok(Math.abs((got.get(iIce) ?? 0) - wIce / norm) < 1e-6);
  assert.ok(Math.abs((got.get(iMelt) ?? 0) - wMelt / norm) < 1e-6);
  assert.equal(x.indices.length, 2);
  const minDf2 = TfidfVectorizer.fit(docs, { analyzer: "word", ngram: [1, 1], minDf: 2, sublinearTf: true });
  assert.deepEqual(minDf2.terms, ["ice"]);
  const capped = TfidfVectorizer.fit(docs, {
    analyzer: "word",
    ngram: [1, 1],
    minDf: 1,
    maxFeatures: 2,
    sublinearTf: false,
  });
  assert.equal(capped.dim, 2);
});

test("tfidf JSON round trip gives the same vectors", () => {
  const docs = ["sea level rise is exaggerated", "sea ice is growing", "the sun drives climate"];
  const v = TfidfVectorizer.fit(docs, { analyzer: "char", ngram: [2, 4], minDf: 1, sublinearTf: true });
  const w = TfidfVectorizer.fromJSON(JSON.parse(JSON.stringify(v.toJSON())));
  const a = v.transform("sea level is rising");
  const b = w.transform("sea level is rising");
  assert.deepEqual(Array.from(a.indices), Array.from(b.indices));
  assert.deepEqual(Array.from(a.values), Array.from(b.values));
});

test("sparse helpers: dot and concat shift indices", () => {
  const a = { indices: [0, 2, 5], values: [1, 2, 3] };
  const b = { indices: [2, 5, 7], values: [4, 5, 6] };
  assert.equal(dot(a, b), 2 * 4 + 3 * 5);
  const c = concatSparse([
    { vector: a, width: 6 },
    { vector: sparseFromDense([0, 9]), width: 2 },
  ]);
  assert.deepEqual(Array.from(c.indices), [0, 2, 5, 6, 7]);
  assert.deepEqual(Array.from(c.values), [1, 2, 3, 0, 9]);
  assert.throws(() => concatSparse([{ vector: a, width: 3 }]));
});
