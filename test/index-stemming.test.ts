import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { itemInterval } from "../src/evaluation/bootstrap.ts";
import { Bm25Builder, Bm25Index, indexTerms, STOCK_PARAMS } from "../src/index/bm25.ts";
import { corpusKind, settingsFor } from "../src/index/bm25-settings.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { rm3Expand } from "../src/index/rm3.ts";
import { hasOtherSchema, manifestPath, readManifest, SCHEMA_VERSION } from "../src/index/schema.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { type Analyzer, BM25_ANALYZER, PLAIN_ANALYZER, stem } from "../src/text/stem.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

async function build(docs: [string, string][], analyzer: Analyzer = BM25_ANALYZER, params = STOCK_PARAMS) {
  const b = new Bm25Builder(analyzer, params);
  for (const [t, a] of docs) b.add(t, a);
  const dir = join(tempDir(), "bm25");
  mkdirSync(dir);
  await b.write(dir);
  return new Bm25Index(dir, { analyzer });
}

test("the BM25 field is Porter2-stemmed with a stop list, in the index and in the query alike", async () => {
  assert.deepEqual(indexTerms("Glaciers are melting faster however"), ["glacier", "melt", "faster"]);
  // Negations and direction words survive the stop list; numbers are never stemmed.
  assert.deepEqual(indexTerms("not more than 1.5 degrees, no increase"), [
    "not",
    "more",
    "1.5",
    "degre",
    "no",
    "increas",
  ]);
  assert.equal(stem("co2"), "co2");
  const docs: [string, string][] = [
    ["Glacier retreat", "Mountain glaciers melted rapidly during the warming decades."],
    ["Ocean heat", "The oceans absorb most excess heat."],
  ];
  const index = await build(docs);
  for (const claim of ["glacier melting", "Melts of the glaciers", "GLACIERS MELT"]) {
    const hits = index.search(index.queryTerms(claim), 2);
    assert.equal(hits[0]?.docno, 0, claim);
    assert.equal(index.queryTerms(claim).length, 2, claim);
  }
  // The old analysis (no stemming) misses the inflected forms.
  const plain = await build(docs, PLAIN_ANALYZER);
  assert.equal(plain.search(plain.queryTerms("melting"), 2).length, 0);
  assert.equal(index.search(index.queryTerms("melting"), 2)[0]?.docno, 0);
  assert.equal(index.term("glaciers"), "glacier");
  assert.equal(index.term("however"), undefined);
});

test("parameters change the ranking as BM25F says, and MaxScore stays exact after setParams", async () => {
  const rnd = mulberry32(5);
  const vocab = Array.from({ length: 120 }, (_, i) => `term${String.fromCharCode(97 + (i % 26))}${i}`);
  const word = () => vocab[Math.min(vocab.length - 1, Math.floor(1 / (rnd() + 0.01)) - 1)];
  const docs: [string, string][] = Array.from({ length: 600 }, () => [
    Array.from({ length: 1 + Math.floor(rnd() * 5) }, word).join(" "),
    Array.from({ length: 5 + Math.floor(rnd() * 80) }, word).join(" "),
  ]);
  const index = await build(docs);
  const tuned = { k1: 0.9, b: 0.4, titleWeight: 3 };
  const fresh = await build(docs, BM25_ANALYZER, tuned);
  index.setParams(tuned);
  assert.deepEqual(index.params, fresh.params);
  for (let q = 0; q < 30; q++) {
    const text = Array.from(
      { length: 2 + Math.floor(rnd() * 5) },
      () => vocab[Math.floor(rnd() ** 2 * 100)],
    ).join(" ");
    const query = index.queryTerms(text);
    for (const k of [1, 10, 100]) {
      assert.deepEqual(index.search(query, k), index.search(query, k, true), text);
      assert.deepEqual(index.search(query, k), fresh.search(fresh.queryTerms(text), k), text);
    }
  }
  // A title match weighs more with a higher title weight.
  const t = await build([
    ["permafrost", "soil carbon in cold regions"],
    ["soil", "permafrost carbon in cold regions"],
  ]);
  t.setParams({ ...STOCK_PARAMS, titleWeight: 3 });
  assert.equal(t.search(t.queryTerms("permafrost"), 2)[0].docno, 0);
  const [f0, f1] = t.fieldScores(t.queryTerms("permafrost"), [0, 1]);
  assert.ok(f0.all > f1.all && f0.title > 0 && f1.title === 0);
});

test("RM3 keeps the claim's terms and adds terms of the feedback documents", async () => {
  const docs: [string, string][] = [
    ["Arctic sea ice", "sea ice extent declines; albedo feedback amplifies the loss"],
    ["Sea ice", "sea ice thickness and albedo"],
    ["Coral", "reef bleaching events"],
  ];
  const index = await build(docs);
  const q = index.queryTerms("sea ice");
  const terms = (d: number) => indexTerms(`${docs[d][0]} ${docs[d][1]}`);
  const x = rm3Expand(index, q, index.search(q, 2), terms, { docs: 2, terms: 5, originalWeight: 0.6 });
  const names = x.map((t) => t.term);
  assert.ok(names.includes("sea") && names.includes("ice"));
  assert.ok(names.includes("albedo"), names.join(" "));
  assert.ok(!names.includes("bleach"), "a term of a document outside the feedback set");
  const total = (ts: typeof q) => ts.reduce((s, t) => s + t.qtf, 0);
  assert.ok(Math.abs(total(x) - total(q)) < 1e-9);
});

test("ingest records the corpus kind and its BM25 settings in a schema 3 manifest; schema 2 is refused clearly", async () => {
  assert.equal(SCHEMA_VERSION, 3);
  assert.equal(corpusKind(10, 12), "sentences");
  assert.equal(corpusKind(10, 60), "abstracts");
  const dir = tempDir();
  const idx = join(dir, "idx");
  await ingest(writeCorpus(dir), idx);
  const m = readManifest(idx);
  assert.equal(m.bm25?.kind, "abstracts");
  assert.deepEqual(m.bm25, settingsFor("abstracts"));
  const index = openIndex(idx);
  try {
    assert.equal(index.bm25.params.k1, Math.fround(m.bm25.k1));
    assert.equal(index.bm25.analyzer, BM25_ANALYZER);
    // Stemmed query against a stemmed index: "glaciers melting" finds "glacier melt".
    const hits = index.bm25.search(index.bm25.queryTerms("glaciers melting"), 1);
    assert.equal(index.docs.id(hits[0].docno), "a2");
  } finally {
    index.close();
  }
  const path = manifestPath(idx);
  writeFileSync(path, readFileSync(path, "utf8").replace(`"schema": ${SCHEMA_VERSION}`, '"schema": 2'));
  assert.ok(hasOtherSchema(idx));
  assert.throws(
    () => openIndex(idx),
    (e) =>
      e instanceof DataError &&
      /index schema version 2 is not supported by this version \(expects 3\); delete the index and ingest again/.test(
        e.message,
      ),
  );
});

test("bootstrapInterval: the full-sample value inside a seeded, reproducible interval", () => {
  const xs = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0));
  const mean = (idx: number[]) => idx.reduce((s, i) => s + xs[i], 0) / idx.length;
  const a = itemInterval(xs.length, mean, { resamples: 500, seed: 3 });
  const b = itemInterval(xs.length, mean, { resamples: 500, seed: 3 });
  assert.deepEqual(a, b);
  assert.equal(a.value, 0.25);
  assert.ok(a.low < 0.25 && a.high > 0.25 && a.low > 0.15 && a.high < 0.35, JSON.stringify(a));
});
