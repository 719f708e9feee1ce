import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { CandidateGather, gatherCandidates } from "../src/retrieval/candidates.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { fakeEncoder, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const CLAIMS = ["Arctic sea ice is declining", "warming oceans", "methane from thawing permafrost", "ppm"];

/** An index with two vector sets from differently sized fake encoders. */
async function twoSetIndex() {
  const dir = tempDir();
  const a = fakeEncoder("fake-a@1", 16);
  const b = fakeEncoder("fake-b@1", 8);
  await ingest(writeCorpus(dir), join(dir, "idx"), {
    vectors: [
      { name: "a", encoder: a, recipe: TITLE_AND_ABSTRACT },
      { name: "b", encoder: b, recipe: TITLE_AND_ABSTRACT },
    ],
  });
  return { index: openIndex(join(dir, "idx")), a, b };
}

test("stage 1 in steps (sets added in any order, docs scored while waiting) equals stage 1 at once", async () => {
  const { index, a, b } = await twoSetIndex();
  try {
    const depth = { bm25: 5, dense: 3 };
    for (const claim of CLAIMS) {
      const query = index.bm25.queryTerms(claim);
      const [va] = await a.embed([claim]);
      const [vb] = await b.embed([claim]);
      const whole = gatherCandidates(index, query, { a: va, b: vb }, depth);
      const g = new CandidateGather(index, query, ["a", "b"], depth);
      g.scoreKnown();
      g.add("b", vb);
      g.scoreKnown();
      assert.throws(() => g.finish(), /not added: a/);
      g.add("a", va);
      assert.deepEqual(g.finish(), whole, claim);
      // Every candidate has every score, and the dense-only ones are there (depth 5 of 8 abstracts for BM25).
      for (const c of whole) assert.ok(Number.isFinite(c.dense.a) && Number.isFinite(c.dense.b));
    }
  } finally {
    index.close();
  }
});

test("a slow encoder (a worker's) and a ready one: the same stage 1 as two ready ones; failures are thrown", async () => {
  const { index, a, b } = await twoSetIndex();
  try {
    const slow = {
      name: a.name,
      embed: (texts: string[]) =>
        new Promise<Float32Array[]>((resolve) => setTimeout(() => resolve(a.embed(texts)), 20)),
    };
    const ready = new Retriever(index, { encoders: { a, b }, fusion: { bm25: 1, dense: { a: 1, b: 0.5 } } });
    const late = new Retriever(index, {
      encoders: { a: slow, b },
      fusion: { bm25: 1, dense: { a: 1, b: 0.5 } },
    });
    assert.deepEqual(await late.stage1(CLAIMS), await ready.stage1(CLAIMS));
    const failing = (name: string, message: string) => ({
      name,
      embed: () =>
        new Promise<Float32Array[]>((_, reject) => setTimeout(() => reject(new Error(message)), 5)),
    });
    // Both fail: the first failure is thrown and the second is not left unhandled.
    const broken = new Retriever(index, {
      encoders: { a: failing(a.name, "a failed"), b: failing(b.name, "b failed") },
    });
    await assert.rejects(broken.stage1(CLAIMS), /a failed|b failed/);
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    index.close();
  }
});
