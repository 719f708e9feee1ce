import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { classifyClaimsFile } from "../src/cli/commands/classify.ts";
import { DataError } from "../src/data/errors.ts";
import { NarrativeClassifier } from "../src/narratives/classifier.ts";
import type { StanceExample } from "../src/narratives/data.ts";
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
