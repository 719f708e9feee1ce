import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { LogisticModel } from "../src/learning/logistic.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { DEFAULT_DEPTH } from "../src/retrieval/candidates.ts";
import { columns, fitScorer, groups, prepare, scoreModel } from "../src/retrieval/experiment.ts";
import { FAMILIES, featureNames } from "../src/retrieval/features.ts";
import { RERANKER_SCHEMA, Reranker, type TrainingGroup, trainPairwise } from "../src/retrieval/reranker.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import type { Claim, LabelledPair } from "../src/types.ts";
import { fakeEncoder, hashedVector, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

/** The fixture corpus indexed with one vector set from the fake encoder. */
async function fakeIndex() {
  const dir = tempDir();
  const enc = fakeEncoder();
  await ingest(writeCorpus(dir), join(dir, "idx"), {
    vectors: [{ name: "fake", encoder: enc, recipe: TITLE_AND_ABSTRACT }],
  });
  return { dir, enc, index: openIndex(join(dir, "idx")) };
}

test("pairwise training learns which feature orders relevant first, deterministically", () => {
  // Feature 0 separates relevant from not; feature 1 is noise correlated with nothing.
  const groups: TrainingGroup[] = Array.from({ length: 30 }, (_, g) => ({
    rows: Array.from({ length: 6 }, (_, i) =>
      Float32Array.of(i === g % 6 ? 2 : 0.1 * i, ((g * 7 + i * 3) % 5) / 5),
    ),
    relevant: Array.from({ length: 6 }, (_, i) => i === g % 6),
    weight: 1,
  }));
  const a = trainPairwise(groups);
  const b = trainPairwise(groups);
  assert.ok(a.model.weights[0] > 0.5, `weight on the separating feature: ${a.model.weights[0]}`);
  assert.ok(Math.abs(a.model.weights[1]) < a.model.weights[0] / 4);
  assert.deepEqual(a.model.toJSON(), b.model.toJSON());
});

test("a re-ranker trained on a small corpus ranks the gold abstracts first and survives a JSON round trip", async () => {
  const { dir, enc, index } = await fakeIndex();
  try {
    const claims: Claim[] = [
      { id: "c1", text: "Arctic sea ice is shrinking every decade" },
      { id: "c2", text: "Sea level is rising because of melting glaciers" },
      { id: "c3", text: "The sun causes recent warming" },
      { id: "c4", text: "Thawing permafrost releases methane" },
      { id: "c5", text: "Antarctica is losing ice mass" },
      { id: "c6", text: "CO2 concentration is above 400 ppm" },
    ];
    const gold: LabelledPair[] = [
      { claimId: "c1", abstractId: "a1", label: "Supports" },
      { claimId: "c1", abstractId: "a8", label: "Not Enough Information" },
      { claimId: "c2", abstractId: "a2", label: "Supports" },
      { claimId: "c3", abstractId: "a3", label: "Refutes" },
      { claimId: "c4", abstractId: "a6", label: "Supports" },
      { claimId: "c5", abstractId: "a8", label: "Supports" },
      { claimId: "c6", abstractId: "a5", label: "Supports" },
    ];
    const base = new Retriever(index, { encoders: { fake: enc } });
    const fusion = { bm25: 1, dense: { fake: 0.3 } };
    const p = await prepare(base, claims, gold, fusion, 8, false);
    const cols = columns(p, p.families, ["fake"]);
    assert.equal(cols.length, p.names.length);
    const { fit } = fitScorer(groups(p, cols));
    const reranker = new Reranker({
      schema: RERANKER_SCHEMA,
      families: p.families,
      vectorSets: { fake: enc.name },
      names: p.names,
      standardiser: fit.standardiser,
      model: fit.model.toJSON(),
      fusion,
      depth: DEFAULT_DEPTH,
      rerankDepth: 8,
    });
    const scores = scoreModel(p, base, reranker);
    assert.equal(scores.recall_at_2, 1);
    const path = join(dir, "reranker.json");
    await reranker.save(path);
    const loaded = Reranker.load(path);
    const r = new Retriever(index, { encoders: { fake: enc }, reranker: loaded });
    assert.ok(r.reranker, "the re-ranker applies: the index has its vector set");
    assert.equal((await r.retrieve("Antarctica is losing ice mass", 1))[0].id, "a8");
    // Without the vector set it was trained with, the retriever falls back to stage 1 instead of guessing.
    assert.equal(new Retriever(index, { reranker: loaded }).reranker, undefined);
    // A scorer learnt on the built-in corpus's judged pairs applies there only: any other index gets the stand-in.
    const judgedModel = { ...fit.model.toJSON(), bias: [42] };
    const adapted = new Reranker({
      ...reranker.json,
      model: judgedModel,
      judged: { standIn: reranker.json.model, weight: 4, l2: 0.01, claims: 6 },
    });
    assert.equal(adapted.forCorpus(true), adapted);
    assert.deepEqual(adapted.forCorpus(false).json.model, reranker.json.model);
    assert.equal(adapted.forCorpus(false).json.judged, undefined);
    assert.equal(reranker.forCorpus(false), reranker);
  } finally {
    index.close();
  }
});

test("re-ranking bounds each score before the sentence vectors: same top k and scores as scoring all, fewer vectors", async () => {
  const { enc, index } = await fakeIndex();
  try {
    // Sentence vectors from hashed words (8-d), counting the sentences embedded.
    let embedded = 0;
    const words = {
      sif(tokens: string[]) {
        embedded++;
        return hashedVector(tokens.join(" "), 8);
      },
    };
    const families = [...FAMILIES];
    const names = featureNames(families, ["fake"]);
    const rnd = mulberry32(4);
    let pruned = 0;
    // The word-vector feature weighs for (+) and against (-): the bound takes either end of its range.
    for (const sign of [1, -1]) {
      const weights = Float32Array.from(names, (n) => (n === "sif_best_sentence" ? sign * 3 : rnd() * 2 - 1));
      const reranker = new Reranker({
        schema: RERANKER_SCHEMA,
        families,
        vectorSets: { fake: enc.name },
        names,
        standardiser: { mean: names.map(() => 0), std: names.map(() => 1) },
        model: new LogisticModel("binary", 2, names.length, weights, Float32Array.of(0)).toJSON(),
        fusion: { bm25: 1, dense: { fake: 0.5 } },
        depth: DEFAULT_DEPTH,
        rerankDepth: 8,
      });
      for (const claim of [
        "Arctic sea ice declines",
        "warming oceans and hurricanes",
        "ice sheet loss",
        "CO2 ppm",
      ]) {
        for (const k of [1, 2, 3, 5, 8]) {
          const all = new Retriever(index, { encoders: { fake: enc }, words, reranker });
          const [s] = await all.stage1([claim]);
          const { rows, x } = all.features(s, families, 8);
          const expected = rows
            .map((i, j) => ({ docno: s.cands[i].docno, score: reranker.score(x[j]) }))
            .sort((a, b) => b.score - a.score || a.docno - b.docno)
            .slice(0, k);
          const full = embedded;
          embedded = 0;
          const r = new Retriever(index, { encoders: { fake: enc }, words, reranker });
          const got = r.rank((await r.stage1([claim]))[0], k);
          assert.deepEqual(
            got.map((h) => [h.docno, h.score]),
            expected.map((h) => [h.docno, h.score]),
            `${claim}, k ${k}`,
          );
          assert.ok(embedded <= full);
          if (embedded < full) pruned++;
          embedded = 0;
        }
      }
    }
    assert.ok(pruned > 0, "some candidates' sentence vectors were never computed");
  } finally {
    index.close();
  }
});
