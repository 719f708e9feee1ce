import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { titleAndLead } from "../src/index/embed-text.ts";
import { openIndex } from "../src/index/open.ts";
import { type DefaultIndexProgress, ensureDefaultIndex } from "../src/pipeline/default-index.ts";
import { fakeEncoder, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

/** Two Climate-FEVER claims sharing one evidence sentence (indexed once). */
const FEVER = [
  {
    claim_id: "1",
    claim: "x",
    evidences: [
      { evidence_id: "Ice:1", article: "Ice", evidence: "Sea ice is thinning.", evidence_label: "SUPPORTS" },
      { evidence_id: "Sun:2", article: "Sun", evidence: "The sun is stable.", evidence_label: "REFUTES" },
    ],
  },
  {
    claim_id: "2",
    claim: "y",
    evidences: [
      { evidence_id: "Ice:1", article: "Ice", evidence: "Sea ice is thinning.", evidence_label: "SUPPORTS" },
    ],
  },
];

test("ensureDefaultIndex ingests both corpora into one index with vectors, once, then reuses it", async () => {
  const dir = tempDir("cc-default-");
  try {
    const corpus = writeCorpus(dir);
    const fever = join(dir, "fever.jsonl");
    writeFileSync(fever, `${FEVER.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const target = join(dir, "home", "index", "default");
    let opened = 0;
    const openVectors = async () => {
      opened++;
      return {
        specs: [{ name: "fake", encoder: fakeEncoder(), recipe: titleAndLead(200) }],
        close: async () => {},
      };
    };
    const progress: DefaultIndexProgress[] = [];
    const corpora = [
      { path: corpus, format: "climatecheck" as const },
      { path: fever, format: "climate-fever" as const },
    ];
    const got = await ensureDefaultIndex((p) => progress.push(p), { dir: target, corpora, openVectors });
    assert.equal(got, target);
    assert.ok(!existsSync(`${target}.partial`), "the partial folder was renamed into place");
    assert.ok(!existsSync(`${target}.lock`), "the lock is released");
    const index = openIndex(target);
    try {
      assert.equal(index.docs.size, 8 + 2);
      assert.notEqual(index.docs.docno("a1"), undefined);
      assert.equal(index.docs.get(index.docs.docno("Ice:1") ?? -1).title, "Ice");
      assert.equal(index.vectors.fake.size, 10);
      assert.equal(index.manifest.sources.length, 2);
    } finally {
      index.close();
    }
    assert.deepEqual([...new Set(progress.map((p) => `${p.step}/${p.steps}`))], ["1/2", "2/2"]);
    assert.equal(progress.at(-1)?.corpus, fever);

    await ensureDefaultIndex(undefined, { dir: target, corpora, openVectors });
    assert.equal(opened, 1, "an existing default index is used as it is");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("ensureDefaultIndex takes over the lock of a process that is gone", async () => {
  const dir = tempDir("cc-default-");
  try {
    const target = join(dir, "default");
    writeFileSync(`${target}.lock`, "999999999");
    const corpora = [{ path: writeCorpus(dir), format: "climatecheck" as const }];
    await ensureDefaultIndex(undefined, {
      dir: target,
      corpora,
      openVectors: async () => ({ specs: [], close: async () => {} }),
    });
    const index = openIndex(target);
    assert.equal(index.docs.size, 8);
    index.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("ensureDefaultIndex rebuilds a default index built by another schema version", async () => {
  const dir = tempDir("cc-default-");
  try {
    const target = join(dir, "default");
    const corpora = [{ path: writeCorpus(dir), format: "climatecheck" as const }];
    const openVectors = async () => ({ specs: [], close: async () => {} });
    await ensureDefaultIndex(undefined, { dir: target, corpora, openVectors });
    const manifest = join(target, "manifest.json");
    const old = JSON.parse(readFileSync(manifest, "utf8"));
    writeFileSync(manifest, JSON.stringify({ ...old, schema: 0 }));
    assert.throws(() => openIndex(target), /schema version 0/);
    await ensureDefaultIndex(undefined, { dir: target, corpora, openVectors });
    const index = openIndex(target);
    assert.equal(index.docs.size, 8);
    index.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
