import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { normalizeInPlace } from "../src/encoders/vector.ts";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import type { Candidate } from "../src/retrieval/candidates.ts";
import { linearFusion, order, rrfFusion } from "../src/retrieval/fusion.ts";
import { checkClaim, Retriever } from "../src/retrieval/retriever.ts";
import { tokenize } from "../src/text/tokenize.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const cand = (docno: number, bm25: number, use: number, bm25Rank: number, useRank: number): Candidate => ({
  docno,
  bm25,
  title: 0,
  abstract: bm25,
  coverage: 0,
  bm25Rank,
  dense: { use },
  denseRank: { use: useRank },
});

test("linear fusion min-max normalises each signal over the list; ties break by docno", () => {
  const cands = [cand(5, 10, 0.2, 0, 2), cand(3, 0, 0.8, 2, 0), cand(9, 5, 0.5, 1, 1)];
  assert.deepEqual(linearFusion(cands, { bm25: 1, dense: {} }), [1, 0, 0.5]);
  const both = linearFusion(cands, { bm25: 1, dense: { use: 1 } });
  assert.deepEqual(
    both.map((x) => x.toFixed(3)),
    ["1.000", "1.000", "1.000"],
  );
  assert.deepEqual(order(cands, both), [1, 0, 2]);
  const rrf = rrfFusion(cands);
  assert.equal(rrf[0], 1 / 61 + 1 / 63);
  assert.equal(rrf[2], 2 / 62);
});

/** Dense encoder that knows two synonyms BM25 cannot match. */
function conceptEncoder() {
  const concept: Record<string, string> = { heating: "warming", warming: "warming", hotter: "warming" };
  return {
    name: "concept@1",
    dim: 32,
    async embed(texts: string[]) {
      return texts.map((t) => {
        const v = new Float32Array(32);
        for (const tok of tokenize(t)) {
          const c = concept[tok] ?? tok;
          let h = 7;
          for (let i = 0; i < c.length; i++) h = (h * 31 + c.charCodeAt(i)) >>> 0;
          v[h % 32] += 1;
        }
        return normalizeInPlace(v);
      });
    },
    async close() {},
  };
}

test("dense candidates bring in an abstract BM25 cannot match, and fusion ranks it", async () => {
  const dir = tempDir();
  const enc = conceptEncoder();
  await ingest(writeCorpus(dir), join(dir, "idx"), {
    vectors: [{ name: "use", encoder: enc, recipe: TITLE_AND_ABSTRACT }],
  });
  const index = openIndex(join(dir, "idx"));
  try {
    const lexical = new Retriever(index);
    assert.deepEqual(await lexical.retrieve("heating"), []);
    const fused = new Retriever(index, { encoders: { use: enc }, fusion: { bm25: 1, dense: { use: 0.5 } } });
    const hits = await fused.retrieve("heating");
    assert.ok(hits.length > 0);
    assert.ok(["a5", "a6"].includes(hits[0].id), `got ${hits[0].id}`);
    const mixed = await fused.retrieve("Antarctic ice sheet heating", 3);
    assert.equal(mixed[0].id, "a8");
    assert.throws(
      () => new Retriever(index, { encoders: { use: { ...enc, name: "other@9" } } }),
      (e) => e instanceof DataError && /built with concept@1/.test(e.message),
    );
  } finally {
    index.close();
  }
});

test("claims that cannot be searched are DataErrors: empty, only punctuation, 100 KB", () => {
  assert.throws(() => checkClaim(""), /empty/);
  assert.throws(() => checkClaim(" ?! "), /empty/);
  assert.throws(() => checkClaim("x".repeat(100_000)), /100000 characters/);
  checkClaim("CO2 is a trace gas");
});
