import assert from "node:assert/strict";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { FILES, readManifest, SCHEMA_VERSION } from "../src/index/schema.ts";
import { ABSTRACTS, fakeEncoder, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

test("ingest without vectors: BM25 finds the matching abstract and the store keeps title, DOI and sentences", async () => {
  const dir = tempDir();
  const r = await ingest(writeCorpus(dir), join(dir, "idx"));
  assert.equal(r.added, ABSTRACTS.length);
  const index = openIndex(join(dir, "idx"));
  try {
    const hits = index.bm25.search(index.bm25.queryTerms("How fast is sea level rising?"), 3);
    assert.equal(index.docs.id(hits[0].docno), "a2");
    const doc = index.docs.get(hits[0].docno);
    assert.equal(doc.title, "Sea level rise");
    assert.equal(doc.doi, "10.1/a2");
    assert.equal(doc.sentences.length, 2);
    const [fields] = index.bm25.fieldScores(index.bm25.queryTerms("sea level"), [hits[0].docno]);
    assert.ok(fields.title > 0 && fields.abstract > 0 && fields.coverage === 1);
  } finally {
    index.close();
  }
});

test("re-ingesting the same corpus adds nothing (idempotent)", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  await ingest(corpus, join(dir, "idx"));
  const again = await ingest(corpus, join(dir, "idx"));
  assert.equal(again.added, 0);
  assert.equal(again.alreadyIndexed, ABSTRACTS.length);
  assert.equal(again.total, ABSTRACTS.length);
});

test("an interrupted ingest resumes from its last commit, discarding a torn write, and embeds only the rest", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  const idx = join(dir, "idx");
  const failing = fakeEncoder();
  const inner = failing.embed;
  failing.embed = async (texts) => {
    if (failing.calls.length === 2) throw new Error("killed");
    return inner(texts);
  };
  const spec = (encoder: ReturnType<typeof fakeEncoder>) => [
    { name: "fake", encoder, recipe: TITLE_AND_ABSTRACT },
  ];
  await assert.rejects(ingest(corpus, idx, { vectors: spec(failing), batchSize: 3 }), /killed/);
  assert.equal(readManifest(idx).committed.docs, 6);
  assert.throws(
    () => openIndex(idx),
    (e) => e instanceof DataError && /did not finish/.test(e.message),
  );
  // A crash in the middle of a write leaves bytes past the commit point.
  appendFileSync(join(idx, FILES.docs), '{"id":"torn","abs');
  const working = fakeEncoder();
  const r = await ingest(corpus, idx, { vectors: spec(working), batchSize: 3 });
  assert.equal(r.resumed, true);
  assert.equal(r.added, ABSTRACTS.length - 6);
  assert.equal(r.alreadyIndexed, 6);
  assert.equal(working.calls.flat().length, ABSTRACTS.length - 6);
  const index = openIndex(idx);
  try {
    assert.equal(index.docs.size, ABSTRACTS.length);
    // Every stored vector is the one of its own doc.
    const check = fakeEncoder();
    for (let d = 0; d < index.docs.size; d++) {
      const [want] = await check.embed([TITLE_AND_ABSTRACT.text(index.docs.get(d))]);
      assert.deepEqual(Array.from(index.vectors.fake.vector(d)), Array.from(want));
    }
  } finally {
    index.close();
  }
});

test("a vector set added to an existing index catches up; other encoders or a left-out set are refused", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  const idx = join(dir, "idx");
  await ingest(corpus, idx);
  const enc = fakeEncoder();
  const r = await ingest(corpus, idx, {
    vectors: [{ name: "fake", encoder: enc, recipe: TITLE_AND_ABSTRACT }],
  });
  assert.equal(r.added, 0);
  assert.equal(enc.calls.flat().length, ABSTRACTS.length);
  const index = openIndex(idx);
  assert.equal(index.vectors.fake.size, ABSTRACTS.length);
  index.close();
  await assert.rejects(
    ingest(corpus, idx, {
      vectors: [{ name: "fake", encoder: fakeEncoder("other@2"), recipe: TITLE_AND_ABSTRACT }],
    }),
    (e) => e instanceof DataError && /built with vectors \[fake=fake@1\/title\+abstract\]/.test(e.message),
  );
  await assert.rejects(
    ingest(corpus, idx),
    (e) => e instanceof DataError && /asks for \[none\]/.test(e.message),
  );
});

test("an index of another schema version is refused with a clear message, never read", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  const idx = join(dir, "idx");
  await ingest(corpus, idx);
  const path = join(idx, FILES.manifest);
  writeFileSync(path, readFileSync(path, "utf8").replace(`"schema": ${SCHEMA_VERSION}`, '"schema": 999'));
  assert.throws(
    () => openIndex(idx),
    (e) => e instanceof DataError && /schema version 999 is not supported/.test(e.message),
  );
  await assert.rejects(ingest(corpus, idx), /schema version 999/);
  assert.throws(() => openIndex(join(dir, "nothing")), /not an index/);
});

test("rows without id or text and duplicate ids are counted skips with their lines; bad UTF-8 is a DataError", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir, [
    { abstract_id: "x1", title: "t", abstract: "Ocean heat content rises." },
    { abstract_id: "", title: "t", abstract: "No id here." },
    { abstract_id: "x2", title: "t", abstract: "" },
    { abstract_id: "x1", title: "t", abstract: "A second x1." },
    { abstract_id: "x3", abstract: "Glaciers retreat." },
  ]);
  const skips: string[] = [];
  const r = await ingest(corpus, join(dir, "idx"), {
    onSkip: (line, reason) => skips.push(`${line}: ${reason}`),
  });
  assert.equal(r.added, 2);
  assert.equal(r.skipped, 3);
  assert.match(skips[0], /^2: .*id/);
  assert.match(skips[1], /^3: .*text/);
  assert.match(skips[2], /^4: duplicate id "x1" \(first on line 1\)/);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(
    bad,
    Buffer.concat([
      Buffer.from('{"abstract_id":"1","abstract":"ok"}\n{"abstract_id":"2","abstract":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n'),
    ]),
  );
  await assert.rejects(
    ingest(bad, join(dir, "idx2")),
    (e) => e instanceof DataError && /UTF-8/.test(e.message) && /line 2/.test(e.message),
  );
});
