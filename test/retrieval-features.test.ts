import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { featureNames } from "../src/retrieval/features.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

test("re-ranker features match claim and abstract on the index's stems; numbers stay exact", async () => {
  const dir = tempDir();
  await ingest(writeCorpus(dir), join(dir, "idx"));
  const index = openIndex(join(dir, "idx"));
  try {
    const r = new Retriever(index);
    // The BM25 candidate depth is the index's (chosen per corpus kind), not a constant.
    assert.equal(r.depth.bm25, index.manifest.bm25?.depth);
    // "levels"/"melting"/"glaciers" only match "level"/"melt"/"glacier" of abstract a2 after stemming.
    const [s] = await r.stage1(["Melting glaciers raise sea levels by 3.3 mm"]);
    const families = ["lexical", "coverage", "numbers"] as const;
    const { rows, x } = r.features(s, families, 8);
    const names = featureNames(families, []);
    const at = rows.findIndex((i) => index.docs.id(s.cands[i].docno) === "a2");
    assert.equal(at, 0, "a2 ranked first");
    const f = (n: string) => x[at][names.indexOf(n)];
    const idf = new Map(s.query.map((q) => [q.term, q.idf]));
    const total = [...idf.values()].reduce((a, b) => a + b, 0);
    assert.ok(
      Math.abs(f("title_coverage") - ((idf.get("sea") ?? 0) + (idf.get("level") ?? 0)) / total) < 1e-6,
    );
    // One sentence of a2 holds "sea level" and "3.3", the other "glacier melt": the best sentence has sea+level+3.3.
    assert.ok(f("sentence_coverage") > 0.4 && f("sentence_coverage") < 1, String(f("sentence_coverage")));
    assert.ok(f("proximity") > 0, "adjacent claim terms near each other in a2");
    assert.equal(f("numbers_matched"), 1);
    assert.equal(f("numbers_missing"), 0);
    assert.ok(Math.abs(f("coverage") - 1 + (idf.get("rais") ?? 0) / total) < 1e-6, "all but 'raise'");
  } finally {
    index.close();
  }
});
