import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { loadTransformers, TRANSFORMERS_PACKAGE } from "../src/encoders/onnx-folder.ts";
import { ingest } from "../src/index/ingest.ts";
import { FILES, readManifest } from "../src/index/schema.ts";
import { readNarrativesConfig } from "../src/narratives/config.ts";
import { openByoRetrieval, type RetrievalConfig, readRetrievalConfig } from "../src/retrieval/byo.ts";
import { order, rrfCombine, rrfFusion } from "../src/retrieval/fusion.ts";
import { openRetriever } from "../src/retrieval/load.ts";
import { openCrossEncoder, openOnnxEmbedder, pool } from "../src/retrieval/onnx-models.ts";
import { resolveVerifierConfig } from "../src/verification/config.ts";
import { ABSTRACTS, tempDir, writeCorpus } from "./retrieval-fixtures.ts";
import { tinyModels } from "./tiny-models-fixture.ts";

const runtime = await loadTransformers().then(
  () => ({ skip: false }),
  () => ({ skip: `${TRANSFORMERS_PACKAGE} is not installed (optional; see docs/cli.md, verify, onnx)` }),
);

const dir = tempDir("byo-models-");
let models: ReturnType<typeof tinyModels>;
let corpus = "";
before(() => {
  if (!runtime.skip) models = tinyModels();
  corpus = writeCorpus(dir);
});
after(() => {});

const profile = (retrieval: object) => ({
  backend: "onnx",
  dense: {
    modelDir: models.embedding,
    queryPrefix: "query: ",
    passagePrefix: "passage: ",
    maxLength: 64,
    ...retrieval,
  },
});

test("pooling: mean over the unmasked tokens or the first token, then unit length", () => {
  // batch 2, seq 2, dim 2; the second row's second token is padding.
  const hidden = { dims: [2, 2, 2], data: Float32Array.of(1, 0, 0, 1, 3, 4, 100, 100) };
  const mask = [1, 1, 1, 0];
  const mean = pool(hidden, mask, "mean", false);
  assert.deepEqual([...mean[0]], [0.5, 0.5]);
  assert.deepEqual([...mean[1]], [3, 4]);
  const cls = pool(hidden, mask, "cls", true);
  assert.deepEqual([...cls[0]], [1, 0]);
  assert.deepEqual(
    [...cls[1]].map((x) => Math.round(x * 1e6) / 1e6),
    [0.6, 0.8],
  );
  assert.deepEqual(rrfCombine([[3, 1, 2]], 0), [1, 1 / 3, 1 / 2]);
});

test("the dense embedder: unit vectors, batch-independent, truncated at maxLength", runtime, async () => {
  const e = await openOnnxEmbedder({ modelDir: models.embedding, maxLength: 4, batchSize: 1 });
  const big = await openOnnxEmbedder({ modelDir: models.embedding, maxLength: 4, batchSize: 64 });
  try {
    assert.equal(e.name, "onnx:embedding/mean+norm/4");
    assert.equal(e.dim, 16);
    const texts = ["sea level rise ice", "arctic ice melt fast", "coral reef", "sea level rise melt"];
    const a = await e.embed(texts);
    const b = await big.embed(texts);
    for (const [i, v] of a.entries()) {
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5);
      assert.deepEqual(
        [...v].map((x) => x.toFixed(5)),
        [...b[i]].map((x) => x.toFixed(5)),
      );
    }
    // 4 tokens (the package cuts after [CLS] and 3 words): the fourth word is cut, so texts 0 and 3 read the same.
    assert.deepEqual(a[0], a[3]);
    assert.notDeepEqual(a[0], a[2]);
  } finally {
    await e.close();
    await big.close();
  }
});

test(
  "a model of the wrong kind, or no folder: the stage, the path and what was expected",
  runtime,
  async () => {
    await assert.rejects(openOnnxEmbedder({ modelDir: models.nli }), (e: Error) => {
      assert.match(
        e.message,
        /retrieval \(dense\): expected an embedding model with output last_hidden_state \[batch, seq, dim\]/,
      );
      assert.ok(e.message.includes(models.nli), e.message);
      return true;
    });
    await assert.rejects(openCrossEncoder({ modelDir: models.nli }), (e: Error) => {
      assert.match(
        e.message,
        /retrieval \(re-ranking\): expected a cross-encoder with output logits \[batch, 1\], the model gives logits \[1, 3\]/,
      );
      return true;
    });
    await assert.rejects(
      openOnnxEmbedder({ modelDir: join(dir, "no-such-model") }),
      /no-such-model: retrieval \(dense\): no such model folder/,
    );
  },
);

test(
  "ingest records the dense set in the manifest, resumes, and backfills an index built without it",
  runtime,
  async () => {
    const config = profile({}) as RetrievalConfig;
    const byo = await openByoRetrieval(config, true);
    const index = join(dir, "dense-index");
    try {
      const r = await ingest(corpus, index, { vectors: byo.specs, batchSize: 3 });
      assert.equal(r.added, ABSTRACTS.length);
      const info = readManifest(index).vectors.dense;
      assert.deepEqual(info, {
        encoder: "onnx:embedding/mean+norm/64",
        dim: 16,
        text: 'prefix:"passage: "+title+abstract',
        docs: ABSTRACTS.length,
      });
      // The stored vectors are the model's vectors of "passage: " + title + abstract, in docno order.
      const raw = readFileSync(join(index, FILES.vectors("dense")));
      const stored = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
      const want = await byo.specs[0].encoder.embed(
        ABSTRACTS.map((a) => `passage: ${a.title}. ${a.abstract}`),
      );
      want.forEach((v, i) => {
        assert.deepEqual(
          [...stored.subarray(i * 16, (i + 1) * 16)].map((x) => x.toFixed(5)),
          [...v].map((x) => x.toFixed(5)),
        );
      });
      const again = await ingest(corpus, index, { vectors: byo.specs });
      assert.equal(again.added, 0);
      assert.equal(again.alreadyIndexed, ABSTRACTS.length);
      // A BM25-only index gets the dense set on a later ingest with the profile: it catches up over every doc.
      const plain = join(dir, "plain-index");
      await ingest(corpus, plain, { vectors: [] });
      await ingest(corpus, plain, { vectors: byo.specs });
      assert.equal(readManifest(plain).vectors.dense.docs, ABSTRACTS.length);
    } finally {
      await byo.close();
    }
  },
);

test(
  "retrieval: BM25 and dense fused by RRF, then the cross-encoders' rankings fused by RRF",
  runtime,
  async () => {
    const index = join(dir, "dense-index");
    const claim = "Sea level rise and arctic ice melt are true";
    const fused = await openRetriever(index, { retrieval: profile({}) as RetrievalConfig });
    const reranked = await openRetriever(index, {
      retrieval: {
        ...profile({}),
        fusionK: 30,
        rerank: {
          models: [{ modelDir: models.crossEncoder }, { modelDir: models.crossEncoder, maxLength: 6 }],
          topN: 5,
          rrfK: 10,
        },
      } as RetrievalConfig,
    });
    const scorer = await openCrossEncoder({ modelDir: models.crossEncoder });
    const short = await openCrossEncoder({ modelDir: models.crossEncoder, maxLength: 6 });
    try {
      const r = fused.retriever;
      assert.equal(r.description, "bm25+dense:onnx:embedding/mean+norm/64 (rrf k=60)");
      assert.equal(r.reranker, undefined);
      const [s] = await r.stage1([claim]);
      assert.deepEqual(s.fused, rrfFusion(s.cands, 60));
      assert.ok(s.cands.every((c) => Object.keys(c.dense).join() === "dense"));
      const hits = await r.retrieve(claim, 8);
      assert.deepEqual(
        hits.map((h) => h.docno),
        order(s.cands, s.fused)
          .map((i) => s.cands[i].docno)
          .slice(0, 8),
      );

      const rr = reranked.retriever;
      assert.match(
        rr.description,
        /\(rrf k=30\) > onnx:cross-encoder, onnx:cross-encoder on top 5 \(rrf k=10\)$/,
      );
      const [s2] = await rr.stage1([claim]);
      const head = s2.order.slice(0, 5).map((i) => s2.cands[i].docno);
      const texts = head.map((d) => {
        const doc = rr.index.docs.get(d);
        return `${doc.title}. ${doc.abstract}`;
      });
      const combined = rrfCombine([await scorer.score(claim, texts), await short.score(claim, texts)], 10);
      const want = head.map((d, j) => ({ d, s: combined[j] })).sort((a, b) => b.s - a.s || a.d - b.d);
      const got = await rr.retrieve(claim, 7);
      assert.deepEqual(
        got.slice(0, 5).map((h) => h.docno),
        want.map((w) => w.d),
      );
      assert.deepEqual(
        got.slice(5).map((h) => h.docno),
        s2.order.slice(5, 7).map((i) => s2.cands[i].docno),
      );
    } finally {
      await fused.close();
      await reranked.close();
      await scorer.close();
      await short.close();
    }
  },
);

test("--no-rerank (model null) leaves the profile's cross-encoders out", runtime, async () => {
  const { retriever, close } = await openRetriever(join(dir, "dense-index"), {
    model: null,
    retrieval: {
      ...profile({}),
      rerank: { models: [{ modelDir: join(dir, "not-even-there") }] },
    } as RetrievalConfig,
  });
  try {
    assert.equal(retriever.crossEncoders, undefined);
    assert.equal(retriever.description, "bm25+dense:onnx:embedding/mean+norm/64 (rrf k=60)");
  } finally {
    await close();
  }
});

test("the cascade: the dense model re-scores the BM25 candidates alone", runtime, async () => {
  const index = join(dir, "dense-index");
  const { retriever, close } = await openRetriever(index, {
    retrieval: { ...profile({}), fusion: "dense" } as RetrievalConfig,
  });
  try {
    assert.match(retriever.description, /\(dense re-scores bm25\)$/);
    const [s] = await retriever.stage1(["sea level rise"]);
    const bm25 = retriever.index.bm25.search(retriever.query("sea level rise"), 1000).map((h) => h.docno);
    assert.deepEqual(s.cands.map((c) => c.docno).sort(), [...bm25].sort());
    assert.deepEqual(
      s.fused,
      s.cands.map((c) => c.dense.dense),
    );
  } finally {
    await close();
  }
});

test(
  "an index without the profile's dense set is refused with the command that builds it",
  runtime,
  async () => {
    const plain = join(dir, "bm25-only");
    await ingest(corpus, plain, { vectors: [] });
    await assert.rejects(openRetriever(plain, { retrieval: profile({}) as RetrievalConfig }), (e: Error) => {
      assert.match(
        e.message,
        /retrieval \(dense\): expected a vector set "dense" built with onnx:embedding\/mean\+norm\/64/,
      );
      assert.match(
        e.message,
        /the index has \[none\]; run `climatecheck ingest CORPUS --index .* --config FILE`/,
      );
      return true;
    });
  },
);

test("profiles: each stage reads its own section, a missing one stays built-in", async () => {
  const file = join(dir, "profile.json");
  writeFileSync(file, JSON.stringify({ verification: { backend: "builtin" } }));
  assert.deepEqual(await readRetrievalConfig(file), { backend: "builtin" });
  // A profile without a verification section keeps the built-in verifier (and --backend still picks one).
  writeFileSync(file, JSON.stringify({ retrieval: { backend: "builtin" } }));
  assert.deepEqual(await resolveVerifierConfig({ config: file }), { backend: "builtin" });
  // Shipped profiles that name local folders (hub-model profiles are tested in models-pull.test.ts).
  const shipped = join("profiles", "climatesense-2026.json");
  assert.equal((await readRetrievalConfig(shipped)).backend, "onnx");
  assert.equal((await readNarrativesConfig(shipped)).backend, "chat");
  assert.equal((await resolveVerifierConfig({ config: shipped })).backend, "chat");
  assert.equal((await readNarrativesConfig(join("profiles", "narratives-chat.json"))).backend, "chat");
  // A plain verifier config is no retrieval profile.
  writeFileSync(file, JSON.stringify({ backend: "chat", baseUrl: "http://127.0.0.1:1/v1", model: "m" }));
  assert.deepEqual(await readRetrievalConfig(file), { backend: "builtin" });
  writeFileSync(
    file,
    JSON.stringify({ retrieval: { backend: "onnx", dense: { modelDir: "x", pooling: "max" } } }),
  );
  await assert.rejects(readRetrievalConfig(file), /profile\.json, field "retrieval\.dense\.pooling"/);
});
