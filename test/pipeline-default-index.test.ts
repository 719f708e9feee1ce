import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";
import { ingestReporter } from "../src/cli/index-progress.ts";
import { BUILTIN_CORPUS, describeCorpus } from "../src/data/builtin-corpus.ts";
import { readCorpus } from "../src/data/climatecheck.ts";
import { PACKAGE_ROOT } from "../src/data/paths.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { USE_LITE_DIM, USE_LITE_NAME } from "../src/encoders/use-lite-model.ts";
import { cacheKey, openVectorCache } from "../src/encoders/vector-cache.ts";
import { titleAndLead } from "../src/index/embed-text.ts";
import { openIndex } from "../src/index/open.ts";
import {
  builtinUseTexts,
  type DefaultIndexProgress,
  defaultCorpora,
  ensureDefaultIndex,
  seedBuiltinVectors,
} from "../src/pipeline/default-index.ts";
import { USE_LEAD_CHARS } from "../src/retrieval/encoders.ts";
import type { CorpusAbstract } from "../src/types.ts";
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

test("the built-in corpus is the default on any machine: shipped, fingerprinted, 4,330 arXiv abstracts", async () => {
  const saved = { corpus: process.env.CLIMATECHECK_CORPUS, data: process.env.CLIMATECHECK_DATA };
  delete process.env.CLIMATECHECK_CORPUS;
  // No training data anywhere: the default corpus must not need it.
  process.env.CLIMATECHECK_DATA = join(tempDir("cc-nodata-"), "missing");
  try {
    assert.deepEqual(defaultCorpora(), [{ path: BUILTIN_CORPUS.path, format: "climatecheck" }]);
  } finally {
    for (const [k, v] of Object.entries({ CLIMATECHECK_CORPUS: saved.corpus, CLIMATECHECK_DATA: saved.data }))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
  const bytes = readFileSync(BUILTIN_CORPUS.path);
  assert.equal(createHash("sha256").update(bytes).digest("hex"), BUILTIN_CORPUS.sha256);
  const rows: CorpusAbstract[] = [];
  for await (const r of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" })) rows.push(r.abstract);
  assert.equal(rows.length, BUILTIN_CORPUS.abstracts);
  assert.ok(rows.every((a) => a.id.startsWith("arXiv:") && a.url?.startsWith("https://arxiv.org/abs/")));
  assert.equal(rows.filter((a) => a.doi).length, 1635);
  assert.equal(new Set(rows.map((a) => a.id)).size, rows.length, "no paper twice");
  assert.ok(rows.every((a) => a.title && a.abstract.length > 50 && a.year));
  assert.match(readFileSync(join(dirname(BUILTIN_CORPUS.path), "SOURCE.md"), "utf8"), /CC0/);
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { files: string[] };
  assert.ok(pkg.files.includes("corpus"), "the corpus ships in the package");
});

test("a default index of an earlier built-in corpus is rebuilt from today's", async () => {
  const dir = tempDir("cc-default-");
  const openVectors = async () => ({ specs: [], close: async () => {} });
  try {
    const target = join(dir, "default");
    const old = writeCorpus(dir);
    await ensureDefaultIndex(undefined, {
      dir: target,
      corpora: [{ path: old, format: "climatecheck" }],
      openVectors,
    });
    const manifest = join(target, "manifest.json");
    const m = JSON.parse(readFileSync(manifest, "utf8"));
    m.sources[0].fingerprint = BUILTIN_CORPUS.previous[0];
    writeFileSync(manifest, JSON.stringify(m));
    await mkdir(join(dir, "now"));
    const now = writeCorpus(join(dir, "now"), [
      { abstract_id: "n1", title: "New", abstract: "Today's corpus." },
    ]);
    await ensureDefaultIndex(undefined, {
      dir: target,
      corpora: [{ path: now, format: "climatecheck" }],
      openVectors,
    });
    const index = openIndex(target);
    assert.deepEqual([index.docs.size, index.manifest.sources[0].path], [1, now]);
    index.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("an old default index of the training sets is rebuilt; one the user ingested is kept", async () => {
  const dir = tempDir("cc-default-");
  const openVectors = async () => ({ specs: [], close: async () => {} });
  try {
    const target = join(dir, "default");
    // What an older version built: SciFact's corpus.csv (any folder named scifact).
    await mkdir(join(dir, "scifact"));
    const legacy = writeCorpus(join(dir, "scifact"));
    const scifactPath = join(dir, "scifact", "corpus.csv");
    await ensureDefaultIndex(undefined, {
      dir: target,
      corpora: [{ path: legacy, format: "climatecheck" }],
      openVectors,
    });
    const manifest = join(target, "manifest.json");
    const m = JSON.parse(readFileSync(manifest, "utf8"));
    m.sources[0].path = scifactPath;
    writeFileSync(manifest, JSON.stringify(m));
    const other = writeCorpus(dir, [
      { abstract_id: "n1", title: "New", abstract: "A new corpus of one abstract." },
    ]);
    const corpora = [{ path: other, format: "climatecheck" as const }];
    await ensureDefaultIndex(undefined, { dir: target, corpora, openVectors });
    const index = openIndex(target);
    assert.deepEqual([index.docs.size, index.manifest.sources[0].path], [1, other]);
    index.close();
    // An index from another corpus (the user's ingest) stays, whatever is configured now.
    await ensureDefaultIndex(undefined, {
      dir: target,
      corpora: [{ path: legacy, format: "climatecheck" }],
      openVectors,
    });
    assert.equal(JSON.parse(readFileSync(manifest, "utf8")).sources[0].path, other);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the corpus of an index: the built-in demo (with how to load the real one), else the file names", () => {
  const builtin = describeCorpus(
    [{ path: "/x/arxiv-climate.jsonl.gz", fingerprint: BUILTIN_CORPUS.sha256 }],
    4330,
  );
  assert.equal(builtin.builtin, true);
  assert.match(builtin.name, /built-in demo corpus/);
  assert.match(builtin.note ?? "", /small demo corpus.*climatecheck data pull.*climatecheck ingest/);
  assert.deepEqual(describeCorpus([{ path: "/d/corpus/pubs.parquet", fingerprint: "ab" }], 9), {
    name: "pubs.parquet",
    abstracts: 9,
    builtin: false,
    note: null,
  });
});

test("progress off a terminal: a line every few seconds with done/total, rate and ETA, and the last state", () => {
  const lines: string[] = [];
  let clock = 0;
  const r = ingestReporter("index", 1000, {
    stream: { isTTY: false, write: (s: string) => lines.push(s) > 0 },
    everySeconds: 5,
    now: () => clock,
  });
  for (const [t, line] of [
    [1, 100],
    [4, 200],
    [6, 300],
    [8, 400],
    [12, 600],
  ]) {
    clock = t * 1000;
    r.update(line, line);
  }
  clock = 20_000;
  r.update(1000, 998);
  r.stop();
  r.stop();
  assert.deepEqual(lines, [
    "index: 300/1000 lines (30%) · 300 added · 50.0/s · ETA 14 s\n",
    "index: 600/1000 lines (60%) · 600 added · 50.0/s · ETA 8 s\n",
    "index: 1000/1000 lines (100%) · 998 added · 49.9/s\n",
  ]);
});

test("the shipped USE-lite vectors of the built-in corpus are what USE-lite computes, and seed the cache", async () => {
  const v = BUILTIN_CORPUS.vectors;
  // Recorded as what the index asks for: otherwise seeding is skipped (regenerate: bench/builtin-vectors.ts).
  assert.deepEqual(
    [v.model, v.dim, v.recipe],
    [USE_LITE_NAME, USE_LITE_DIM, titleAndLead(USE_LEAD_CHARS).spec],
  );
  const raw = gunzipSync(readFileSync(v.path));
  const flat = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const texts = await builtinUseTexts();
  assert.equal(flat.length, texts.length * v.dim);
  const sample = texts.map((_, i) => i).filter((i) => i % 160 === 7);
  const use = await openUseLite({ workers: 0, cacheDir: false });
  try {
    const got = await use.embed(sample.map((i) => texts[i]));
    for (const [j, i] of sample.entries()) {
      const shipped = flat.subarray(i * v.dim, (i + 1) * v.dim);
      const diff = Math.max(...got[j].map((x, d) => Math.abs(x - shipped[d])));
      assert.ok(diff < 1e-4, `abstract ${i}: max difference ${diff}`);
    }
  } finally {
    await use.close();
  }
  const dir = tempDir("cc-seed-");
  try {
    assert.equal(await seedBuiltinVectors(dir), BUILTIN_CORPUS.abstracts);
    assert.equal(await seedBuiltinVectors(dir), 0, "a second seeding adds nothing");
    const cache = openVectorCache(dir, USE_LITE_NAME, USE_LITE_DIM);
    const found = cache.getMany(texts.map((t) => cacheKey(USE_LITE_NAME, t)));
    cache.close();
    assert.ok(found.every(Boolean));
    assert.deepEqual([...(found[7] ?? [])], [...flat.subarray(7 * v.dim, 8 * v.dim)]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
