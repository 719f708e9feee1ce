import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { LABELS } from "../src/types.ts";
import {
  loadTransformers,
  openOnnxVerifier,
  TRANSFORMERS_PACKAGE,
} from "../src/verification/backends/onnx.ts";
import { aggregateSentences, classProbs, resolveLabelMap } from "../src/verification/backends/onnx-labels.ts";
import { openVerifier, resolveVerifierConfig } from "../src/verification/config.ts";
import { abstractSentences, type Verifier, type VerifyPair } from "../src/verification/verifier.ts";

// A tiny NLI "cross-encoder" built here, so the real loading path (tokenizer.json, config.json, ONNX through
// onnxruntime-node) runs without any download. logits = sum over unmasked tokens of a per-token row; classes in
// MNLI order contradiction, entailment, neutral: "true" votes entailment, "false" contradiction, any unknown
// word neutral.
const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "sea", "level", "rises", "true", "false"];
const ROWS: Record<string, [number, number, number]> = {
  "[UNK]": [0, 0, 1],
  true: [0, 5, 0],
  false: [5, 0, 0],
};

/** Protobuf wire format, just what an ONNX ModelProto needs (varints and length-delimited fields). */
const pb = {
  varint(n: number | bigint): number[] {
    const out: number[] = [];
    let v = BigInt(n);
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v) b |= 0x80;
      out.push(b);
    } while (v);
    return out;
  },
  cat(parts: Uint8Array[]): Uint8Array {
    const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let k = 0;
    for (const p of parts) {
      out.set(p, k);
      k += p.length;
    }
    return out;
  },
  int: (field: number, v: number) => Uint8Array.from([...pb.varint(field << 3), ...pb.varint(v)]),
  bytes: (field: number, b: Uint8Array) =>
    pb.cat([Uint8Array.from([...pb.varint((field << 3) | 2), ...pb.varint(b.length)]), b]),
  str: (field: number, s: string) => pb.bytes(field, new TextEncoder().encode(s)),
  msg: (field: number, ...parts: Uint8Array[]) => pb.bytes(field, pb.cat(parts)),
};

// ONNX field numbers (onnx.proto3): TensorProto dims=1 data_type=2 name=8 raw_data=9; NodeProto input=1 output=2
// name=3 op_type=4 attribute=5; AttributeProto name=1 i=3 type=20; GraphProto node=1 name=2 initializer=5 input=11
// output=12; ModelProto ir_version=1 producer_name=2 graph=7 opset_import=8.
const FLOAT = 1;
const INT64 = 7;
const tensor = (name: string, dims: number[], type: number, data: Float32Array | BigInt64Array) =>
  pb.msg(
    5,
    ...dims.map((d) => pb.int(1, d)),
    pb.int(2, type),
    pb.str(8, name),
    pb.bytes(9, new Uint8Array(data.buffer)),
  );
const valueInfo = (field: number, name: string, type: number, dims: (number | string)[]) =>
  pb.msg(
    field,
    pb.str(1, name),
    pb.msg(
      2,
      pb.msg(
        1,
        pb.int(1, type),
        pb.msg(2, ...dims.map((d) => pb.msg(1, typeof d === "number" ? pb.int(1, d) : pb.str(2, d)))),
      ),
    ),
  );
const node = (op: string, inputs: string[], output: string, attr?: [string, number]) =>
  pb.msg(
    1,
    ...inputs.map((i) => pb.str(1, i)),
    pb.str(2, output),
    pb.str(3, output),
    pb.str(4, op),
    ...(attr ? [pb.msg(5, pb.str(1, attr[0]), pb.int(3, attr[1]), pb.int(20, 2))] : []),
  );

function onnxModel(): Uint8Array {
  const table = new Float32Array(VOCAB.length * 3);
  for (const [i, w] of VOCAB.entries()) table.set(ROWS[w] ?? [0, 0, 0], i * 3);
  const graph = pb.msg(
    7,
    node("Gather", ["table", "input_ids"], "token_logits", ["axis", 0]),
    node("Cast", ["attention_mask"], "mask", ["to", FLOAT]),
    node("Unsqueeze", ["mask", "axis2"], "mask3"),
    node("Mul", ["token_logits", "mask3"], "masked"),
    node("ReduceSum", ["masked", "axis1"], "logits", ["keepdims", 0]),
    pb.str(2, "tiny-nli"),
    tensor("table", [VOCAB.length, 3], FLOAT, table),
    tensor("axis1", [1], INT64, BigInt64Array.of(1n)),
    tensor("axis2", [1], INT64, BigInt64Array.of(2n)),
    valueInfo(11, "input_ids", INT64, ["batch", "seq"]),
    valueInfo(11, "attention_mask", INT64, ["batch", "seq"]),
    valueInfo(12, "logits", FLOAT, ["batch", 3]),
  );
  return pb.cat([
    pb.int(1, 8),
    pb.str(2, "climatecheck-test"),
    graph,
    pb.msg(8, pb.str(1, ""), pb.int(2, 13)),
  ]);
}

function tokenizerJson(): object {
  const special = (id: number) => ({
    id,
    content: VOCAB[id],
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const tok = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
  const seq = (id: string, typeId: number) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [0, 1, 2, 3].map(special),
    normalizer: { type: "Lowercase" },
    pre_tokenizer: { type: "Whitespace" },
    post_processor: {
      type: "TemplateProcessing",
      single: [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)],
      pair: [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((w, i) => [w, i])),
    },
  };
}

/** A model folder: transformers.js layout (onnx/model.onnx) or Optimum's (model.onnx at the top). */
function writeModel(dir: string, layout: "onnx" | "top" = "onnx"): string {
  const onnxDir = layout === "onnx" ? join(dir, "onnx") : dir;
  mkdirSync(onnxDir, { recursive: true });
  writeFileSync(join(onnxDir, "model.onnx"), onnxModel());
  const id2label = { 0: "contradiction", 1: "entailment", 2: "neutral" };
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_type: "deberta-v2", id2label }));
  writeFileSync(
    join(dir, "tokenizer_config.json"),
    JSON.stringify({
      model_max_length: 64,
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      pad_token: "[PAD]",
      unk_token: "[UNK]",
    }),
  );
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson()));
  return dir;
}

// The runtime is an optional package (not installed by `npm ci`; .ci/run installs it): without it, these are skipped.
const runtime = await loadTransformers().then(
  () => ({ skip: false }),
  () => ({ skip: `${TRANSFORMERS_PACKAGE} is not installed (optional; see README, onnx backend)` }),
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
