import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { classifyClaimsFile } from "../src/cli/commands/classify.ts";
import { DataError } from "../src/data/errors.ts";
import { Mlp } from "../src/learning/mlp.ts";
import { NarrativeClassifier } from "../src/narratives/classifier.ts";
import type { StanceExample } from "../src/narratives/data.ts";
import { combinedGateScore, plattProbability, scoreVector, scoringModels } from "../src/narratives/model.ts";
import { DEFAULT_TRAIN_OPTIONS, trainNarrativeModel } from "../src/narratives/train.ts";
import type { NarrativeExample } from "../src/types.ts";

const places = ["Antarctica", "Greenland", "the Arctic", "the Alps", "Alaska", "Iceland", "Canada", "Norway"];

/** A small corpus with three clearly worded narratives and neutral texts. */
function corpus(): NarrativeExample[] {
  const out: NarrativeExample[] = [];
  const add = (code: string, texts: string[]) => {
    for (const t of texts) out.push({ id: `t${out.length}`, text: t, codes: [code] });
  };
  add(
    "1_1",
    places.map((p) => `The ice in ${p} is growing, sea ice is not melting at all, glaciers expand`),
  );
  add(
    "2_1",
    places.map(
      (p) => `Warming in ${p} is just the sun and natural cycles, solar activity drives the climate`,
    ),
  );
  add(
    "5_2",
    places.map((p) => `Alarmist media in ${p} spread climate hysteria, activists and politicians are biased`),
  );
  add(
    "0_0",
    places.map((p) => `The new train line in ${p} opens next year with a station near the museum`),
  );
  return out;
}

/** Stance rows: the coded corpus plus mainstream texts on the same subjects that carry no narrative. */
function stance(): StanceExample[] {
  const rows: StanceExample[] = corpus().map((e) => ({
    id: e.id,
    text: e.text,
    narrative: e.codes[0] !== "0_0",
    source: "cards",
  }));
  for (const p of places) {
    rows.push({
      id: `m${p}`,
      text: `The ice in ${p} is melting fast, glaciers shrink and retreat`,
      narrative: false,
      source: "cf-evidence",
    });
    rows.push({
      id: `n${p}`,
      text: `Warming in ${p} comes from human CO2, not the sun or natural cycles`,
      narrative: false,
      source: "cf-evidence",
    });
  }
  return rows;
}

test("the classifier learns a small corpus and the classify command writes the task 2 file", async () => {
  const json = await trainNarrativeModel(corpus(), stance(), {
    ...DEFAULT_TRAIN_OPTIONS,
    families: ["word", "char", "desc"],
    folds: 2,
    wordMaxFeatures: 500,
    charMaxFeatures: 1000,
  });
  const dir = await mkdtemp(join(tmpdir(), "narratives-"));
  try {
    const model = join(dir, "model.json");
    await writeFile(model, JSON.stringify(json));
    const claims = join(dir, "claims.csv");
    await writeFile(
      claims,
      [
        "claim_id,claim",
        'c1,"Sea ice is growing, the glaciers are not melting"',
        'c2,"It is the sun: natural cycles and solar activity"',
        'c3,"Alarmist media and biased activists spread climate hysteria"',
        'c4,"The museum station opens next year"',
        'c5,"The glaciers are melting fast and the sea ice is shrinking"',
      ].join("\n"),
    );
    const out = join(dir, "pred.csv");
    const probs = join(dir, "probs.jsonl");
    const r = await classifyClaimsFile({ claims, out, probabilities: probs, model });
    assert.equal(r.claims, 5);
    const lines = (await readFile(out, "utf8")).trim().split("\n");
    // c5 talks about ice like c1 but asserts the opposite: no narrative.
    assert.deepEqual(lines, ["claim_id,narrative", "c1,1_1", "c2,2_1", "c3,5_2", "c4,0_0", "c5,0_0"]);
    const rows = (await readFile(probs, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, 5);
    assert.equal(rows[0].claim_id, "c1");
    assert.equal(Object.keys(rows[0].probabilities).length, 33);
    assert.ok(rows[0].probabilities["1_1"] > rows[0].probabilities["2_1"]);
    // P(narrative) is reported, P(0_0) is its complement, and the label follows it.
    for (const row of rows) {
      assert.ok(Math.abs(row.probabilities["0_0"] - (1 - row.p_narrative)) < 1e-3);
      assert.equal(row.narrative[0] === "0_0", row.p_narrative < 0.5);
    }
    // A missing model is a user error naming the file.
    await assert.rejects(classifyClaimsFile({ claims, out, model: join(dir, "nope.json") }), DataError);
    // The command itself: --probabilities without a file writes beside --out; bad input exits 2.
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "classify", ...args], {
        encoding: "utf8",
      });
    const out2 = join(dir, "run.csv");
    const ok = cli("--claims", claims, "--out", out2, "--model", model, "--probabilities");
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(await readFile(out2, "utf8"), await readFile(out, "utf8"));
    assert.equal((await readFile(join(dir, "run.probabilities.jsonl"), "utf8")).trim().split("\n").length, 5);
    const bad = cli("--claims", join(dir, "missing.csv"), "--out", out2, "--model", model);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /missing\.csv/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("training is deterministic and a model with the encoder family refuses to run without one", async () => {
  const opts = {
    ...DEFAULT_TRAIN_OPTIONS,
    families: ["word", "desc"] as DEFAULT_FAMILIES,
    folds: 2,
    wordMaxFeatures: 300,
    charMaxFeatures: 300,
  };
  const a = await trainNarrativeModel(corpus(), stance(), opts);
  const b = await trainNarrativeModel(corpus(), stance(), opts);
  assert.deepEqual(a, b);
  const withUse = {
    ...a,
    encoder: "use-lite@0.2.0",
    features: {
      ...a.features,
      config: { ...a.features.config, families: [...a.features.config.families, "use" as const] },
    },
  };
  assert.throws(() => new NarrativeClassifier(withUse));
});

type DEFAULT_FAMILIES = typeof DEFAULT_TRAIN_OPTIONS.families;

/** A stand-in sentence encoder: hashed bag of words in 16 dimensions, deterministic. */
const fakeEncoder = {
  name: "fake-bow-16",
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = new Float32Array(16);
      for (const w of t.toLowerCase().split(/\W+/).filter(Boolean)) {
        let h = 0;
        for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
        v[h % 16] += 1;
      }
      return v;
    });
  },
};

test("with sentence vectors the trainer tries the gate MLP; a gate with one reads the vector and the label follows P", async () => {
  const json = await trainNarrativeModel(corpus(), stance(), {
    ...DEFAULT_TRAIN_OPTIONS,
    families: ["word", "desc", "use"],
    encoder: fakeEncoder,
    folds: 2,
    wordMaxFeatures: 300,
    charMaxFeatures: 300,
  });
  // The linear gate's figures are kept beside the shipped ones, and the MLP ships exactly when mlpPays said so.
  const cv = json.crossValidation;
  assert.ok(cv.linear && typeof cv.mlpShipped === "boolean");
  assert.equal(json.gate.mlp !== undefined, cv.mlpShipped);
  // Whatever the toy data gave, give the gate an MLP to exercise scoring: the score is the standardised sum.
  const texts = stance().map((e) => e.text);
  const vectors = await fakeEncoder.embed(texts);
  const net = Mlp.train(
    vectors,
    stance().map((e) => (e.narrative ? 1 : 0)),
    { seed: 1, hidden: 4, epochs: 5 },
  );
  const mlp = { model: net.toJSON(), linear: { mean: 0.5, sd: 2 }, mlp: { mean: -0.2, sd: 1.5 } };
  const withMlp = { ...json, gate: { ...json.gate, mlp } };
  const c = new NarrativeClassifier(withMlp, fakeEncoder);
  const claims = ["Sea ice is growing, the glaciers are not melting", "The glaciers are melting fast"];
  const preds = await c.classify(claims);
  const models = scoringModels(withMlp);
  const [v0, v1] = await fakeEncoder.embed(claims);
  for (const [i, v] of [v0, v1].entries()) {
    const x = models.features.vector(claims[i], v);
    const z = combinedGateScore(models.gate.model.decision(x)[0], net.decision(v), mlp);
    assert.ok(Math.abs(preds[i].narrative - plattProbability(z, json.gate.platt)) < 1e-9);
    assert.equal(preds[i].codes[0] === "0_0", preds[i].narrative < 0.5);
    // Without the sentence vector such a gate refuses to score rather than fall back to the linear logit.
    assert.throws(() => scoreVector(models, x), /sentence vector/);
  }
  // The MLP changed the probability (else this test would not see it).
  const linearOnly = await new NarrativeClassifier(
    json.gate.mlp ? { ...json, gate: { ...json.gate, mlp: undefined } } : json,
    fakeEncoder,
  ).classify(claims);
  assert.notEqual(linearOnly[0].narrative, preds[0].narrative);
});
