import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { TINY_NLI_ROWS, writeTinyModel } from "../bench/fixtures/tiny-models.ts";
import { loadTransformers, TRANSFORMERS_PACKAGE } from "../src/encoders/onnx-folder.ts";
import { LABELS } from "../src/types.ts";
import { openOnnxVerifier } from "../src/verification/backends/onnx.ts";
import { aggregateSentences, classProbs, resolveLabelMap } from "../src/verification/backends/onnx-labels.ts";
import { openVerifier, resolveVerifierConfig } from "../src/verification/config.ts";
import { abstractSentences, type Verifier, type VerifyPair } from "../src/verification/verifier.ts";

// The tiny NLI model of bench/fixtures/tiny-models.ts, so the real loading path (tokenizer.json, config.json, ONNX
// through onnxruntime-node) runs without any download. logits = sum over unmasked tokens of a per-token row; classes
// in MNLI order contradiction, entailment, neutral: "true" votes entailment, "false" contradiction, any unknown word
// neutral.
const writeModel = (dir: string, layout: "onnx" | "top" = "onnx") =>
  writeTinyModel(dir, { kind: "nli", rows: TINY_NLI_ROWS, layout });

// The runtime is an optional package (not installed by `npm ci`; .ci/run installs it): without it, these are skipped.
const runtime = await loadTransformers().then(
  () => ({ skip: false }),
  () => ({ skip: `${TRANSFORMERS_PACKAGE} is not installed (optional; see docs/cli.md, verify, onnx)` }),
);

let root = "";
let modelDir = "";
before(() => {
  root = mkdtempSync(join(tmpdir(), "climatecheck-onnx-"));
  modelDir = writeModel(join(root, "tiny-nli"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const PAIRS: VerifyPair[] = [
  {
    claim: "Sea level rises",
    abstract: "",
    sentences: ["Sea level was measured.", "Sea level rises is true."],
  },
  { claim: "Sea level rises", abstract: "", sentences: ["That is false.", "Other words here."] },
  { claim: "Sea level rises", abstract: "", sentences: ["Unrelated words only."] },
];

async function verdicts(verifier: Verifier, pairs = PAIRS) {
  try {
    return await verifier.verifyPairs(pairs);
  } finally {
    await verifier.close();
  }
}

test("the tiny model's words decide: true supports, false refutes, neither is NEI", runtime, async () => {
  const v = await verdicts(await openOnnxVerifier({ modelDir }));
  assert.deepEqual(
    v.map((x) => [x.label, x.rationale]),
    [
      ["Supports", [1]],
      ["Refutes", [0]],
      ["Not Enough Information", []],
    ],
  );
  // The decisive sentence "sea level rises is true ." + claim: logits entailment 5, neutral 2 ("is", ".").
  const expected = classProbs([0, 5, 2], ["refutes", "supports", "nei"]);
  for (const k of ["supports", "refutes", "nei"] as const)
    assert.ok(Math.abs(v[0].probs[k] - expected[k]) < 1e-6);
  assert.equal(v[0].confidence, v[0].probs.supports);
});

test("a swapped label map swaps the verdicts; index keys work like names", runtime, async () => {
  const swapped = await verdicts(
    await openOnnxVerifier({
      modelDir,
      labelMap: { entailment: "refutes", contradiction: "supports", neutral: "nei" },
    }),
  );
  assert.deepEqual(
    swapped.map((x) => x.label),
    ["Refutes", "Supports", "Not Enough Information"],
  );
  const byIndex = await verdicts(
    await openOnnxVerifier({ modelDir, labelMap: { 0: "refutes", 1: "supports", 2: "nei" } }),
  );
  assert.deepEqual(
    byIndex.map((x) => x.label),
    ["Supports", "Refutes", "Not Enough Information"],
  );
});

test("batching and sorting by length keep every verdict with its pair", runtime, async () => {
  const many = Array.from({ length: 7 }, (_, i) => PAIRS[i % 3]);
  const small = await verdicts(await openOnnxVerifier({ modelDir, batchSize: 2 }), many);
  const big = await verdicts(await openOnnxVerifier({ modelDir, batchSize: 64 }), many);
  assert.deepEqual(small, big);
  assert.deepEqual(
    small.map((x) => x.label),
    many.map((_, i) => ["Supports", "Refutes", "Not Enough Information"][i % 3]),
  );
});

test("abstract-level scoring and the Optimum folder layout", runtime, async () => {
  const top = writeModel(join(root, "optimum-layout"), "top");
  const pairs: VerifyPair[] = [
    { claim: "Sea level rises", abstract: "", sentences: ["Sea level rises.", "It is true."] },
    { claim: "Sea level rises", abstract: "", sentences: ["False.", "Sea level."] },
    { claim: "Sea level rises", abstract: "", sentences: ["Unrelated words only."] },
  ];
  // The sentences make one premise, so the rationale stays empty; e.g. pair 0 has entailment 5 vs neutral 4.
  const v = await verdicts(await openOnnxVerifier({ modelDir: top, sentenceLevel: false }), pairs);
  assert.deepEqual(
    v.map((x) => [x.label, x.rationale]),
    [
      ["Supports", []],
      ["Refutes", []],
      ["Not Enough Information", []],
    ],
  );
});

test("the onnx backend keeps the verifier contract, chosen through the config", runtime, async () => {
  const file = join(root, "verifier.json");
  writeFileSync(file, JSON.stringify({ verification: { backend: "onnx", modelDir, batchSize: 4 } }));
  const verifier = await openVerifier(await resolveVerifierConfig({ config: file, backend: "onnx" }));
  assert.equal(verifier.name, "onnx:tiny-nli");
  const pairs: VerifyPair[] = [
    { claim: "Sea level rises", abstract: "Sea level rose 3 mm per year. Warming makes that true." },
    { claim: "Coral is thriving", abstract: "RESULTS: That is false. CONCLUSIONS: Reefs are in decline." },
    { claim: "Snow is green", abstract: "One sentence only" },
  ];
  const v = await verifier.verifyPairs(pairs);
  assert.equal(v.length, pairs.length);
  for (const [i, x] of v.entries()) {
    assert.ok(LABELS.includes(x.label), x.label);
    assert.ok(Math.abs(x.probs.supports + x.probs.refutes + x.probs.nei - 1) < 1e-5);
    const n = abstractSentences(pairs[i]).length;
    assert.ok(
      x.rationale.every((j) => Number.isInteger(j) && j >= 0 && j < n),
      `rationale ${x.rationale}`,
    );
    if (x.label === "Not Enough Information") assert.deepEqual(x.rationale, []);
  }
  assert.deepEqual(await verifier.verify(pairs[1].claim, { abstract: pairs[1].abstract }), v[1]);
  assert.deepEqual(await verifier.verifyPairs([]), []);
  await verifier.close();
});

test("without the optional package the backend names it and how to install it", async () => {
  await assert.rejects(loadTransformers("@climatecheck/no-such-package"), (e: Error) => {
    assert.match(
      e.message,
      /needs the optional package @climatecheck\/no-such-package, which is not installed/,
    );
    assert.match(e.message, /npm install --no-save @climatecheck\/no-such-package@4\.3\.1/);
    return true;
  });
});

test("label maps: MNLI defaults, every class mapped, typos and unknown names refused", () => {
  const mnli = { 0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT" };
  assert.deepEqual(resolveLabelMap(mnli), ["refutes", "nei", "supports"]);
  assert.deepEqual(resolveLabelMap({ 0: "entailment", 1: "not_entailment" }), ["supports", "nei"]);
  assert.throws(() => resolveLabelMap({ 0: "LABEL_0", 1: "LABEL_1" }), /has no label: set labelMap/);
  assert.throws(() => resolveLabelMap(mnli, { entailmnt: "supports" }), /not a model class/);
  assert.throws(
    () => resolveLabelMap(mnli, { 0: "refutes", 2: "supports" }),
    /class 1 "NEUTRAL" has no label/,
  );
  // Classes sharing a label add up.
  const p = classProbs([0, 0], ["nei", "nei"]);
  assert.deepEqual(p, { supports: 0, refutes: 0, nei: 1 });
});

test("aggregation: the strongest Supports/Refutes sentence decides, the rationale is its label's sentences", () => {
  const s = (supports: number, refutes: number) => ({ supports, refutes, nei: 1 - supports - refutes });
  const v = aggregateSentences([s(0.1, 0.1), s(0.6, 0.1), s(0.2, 0.7), s(0.55, 0)]);
  assert.equal(v.label, "Refutes");
  assert.deepEqual(v.rationale, [2]);
  const weak = aggregateSentences([s(0.5, 0.1), s(0.48, 0.1), s(0.2, 0)], 0.6);
  assert.equal(weak.label, "Not Enough Information");
  assert.deepEqual(weak.rationale, []);
  assert.deepEqual(aggregateSentences([s(0.5, 0.1), s(0.48, 0.1), s(0.2, 0)]).rationale, [0, 1]);
});
