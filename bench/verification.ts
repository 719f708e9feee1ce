/**
 * Claim verification (task 1.2) on our dev splits (SciFact oracle pairs, Climate-FEVER pairs): the built-in
 * verifier beside a TF-IDF + logistic regression baseline trained on the same train split, an ablation per
 * feature family, calibration, and batch speed with a cold encoder cache.
 */
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { trainBaseline } from "../src/verification/baseline.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import type { Source, SourcedExample } from "../src/verification/examples.ts";
import { ALL_FAMILIES, type Family } from "../src/verification/features.ts";
import { VerificationModel } from "../src/verification/model.ts";
import {
  type EvaluationResult,
  evaluateModel,
  loadVerificationData,
  summarise,
  trainVerificationModel,
} from "../src/verification/train.ts";
import { type Bench, table } from "./report.ts";

const SOURCES: Source[] = ["scifact", "climate-fever"];
const f3 = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(3));
const log = (m: string) => process.stderr.write(`  ${m}\n`);

type Row = Omit<EvaluationResult, "verdicts" | "eceUncalibrated"> & { eceUncalibrated?: number };

function figures(name: string, bySource: Map<Source, Row>): (string | number)[][] {
  return SOURCES.map((s) => {
    const r = bySource.get(s) as Row;
    return [
      name,
      s,
      f3(r.scores.f1_weighted),
      f3(r.scores.per_label.Supports?.f1),
      f3(r.scores.per_label.Refutes?.f1),
      f3(r.scores.per_label["Not Enough Information"]?.f1),
      f3(r.neiAsSupports),
      r.eceUncalibrated === undefined ? f3(r.ece) : `${f3(r.eceUncalibrated)} → ${f3(r.ece)}`,
    ];
  });
}

export const bench: Bench = async () => {
  const { train, dev } = await loadVerificationData();
  const devBy = new Map(SOURCES.map((s) => [s, dev.filter((e) => e.source === s)]));
  const encoder = await openUseLite();
  const embed = (texts: string[]) => encoder.embed(texts);
  const rows: (string | number)[][] = [];

  log("baseline");
  const baseline = trainBaseline(train);
  rows.push(
    ...figures(
      "TF-IDF + LR baseline",
      new Map(SOURCES.map((s) => [s, summarise(devBy.get(s) ?? [], baseline.predict(devBy.get(s) ?? []))])),
    ),
  );

  const run = async (
    families: Family[],
    candidates: number,
    quick: { folds?: number; stanceMaxIter?: number } = {},
  ) => {
    const { model, calibration } = await trainVerificationModel(train, {
      embed,
      encoderName: encoder.name,
      families,
      candidates,
      ...quick,
    });
    const m = new VerificationModel(model);
    const out = new Map<Source, Row>();
    for (const s of SOURCES) out.set(s, await evaluateModel(m, devBy.get(s) as SourcedExample[], embed));
    return { model: m, calibration, out };
  };

  log("built-in verifier (shipped configuration)");
  const full = await run([...ALL_FAMILIES], 2);
  rows.push(...figures("built-in (all features, 2 candidates)", full.out));

  // Ablations retrain with a cheaper schedule (2 folds, 60 L-BFGS iterations), reference row included.
  const ablations: (string | number)[][] = [];
  const variants: [string, Family[], number][] = [
    ["all features (quick schedule)", [...ALL_FAMILIES], 2],
    ["lexical only (no USE-lite)", ALL_FAMILIES.filter((f) => !f.startsWith("use")), 2],
    ["without use_raw (u, v)", ALL_FAMILIES.filter((f) => f !== "use_raw"), 2],
    ["without polarity", ALL_FAMILIES.filter((f) => f !== "polarity"), 2],
    ["USE-lite only (no lexical)", ["use_raw", "use_pair"], 2],
    ["1 candidate sentence", [...ALL_FAMILIES], 1],
  ];
  let k1: VerificationModel | undefined;
  for (const [name, families, k] of variants) {
    log(`ablation: ${name}`);
    const r = await run(families, k, { folds: 2, stanceMaxIter: 60 });
    if (k === 1) k1 = r.model;
    ablations.push(...figures(name, r.out).map((row) => [row[0], row[1], row[2], row[4], row[6]]));
  }
  await encoder.close();

  // Speed: a fresh encoder with no vector cache per model, every dev pair verified as one batch.
  const speed: (string | number)[][] = [];
  for (const [name, model] of [
    ["2 candidates", full.model],
    ["1 candidate (quick schedule)", k1 as VerificationModel],
  ] as const) {
    const cold = await openUseLite({ cacheDir: false });
    const verifier = await openBuiltinVerifier({ model, encoder: cold });
    for (const s of SOURCES) {
      const examples = (devBy.get(s) ?? []).map((e) => ({
        claim: e.claim,
        abstract: "",
        sentences: e.sentences,
      }));
      const started = performance.now();
      await verifier.verifyPairs(examples);
      const seconds = (performance.now() - started) / 1000;
      speed.push([name, s, examples.length, f3(seconds), (examples.length / seconds).toFixed(1)]);
    }
    await cold.close();
  }

  const c = full.calibration;
  return {
    id: "verification",
    title: "Claim verification (task 1.2): built-in verifier vs TF-IDF baseline",
    command: "npm run bench -- verification",
    markdown: `Dev splits by claim id (20 %, salt "verification"): SciFact oracle pairs (evidence abstracts + cited and
most-similar non-evidence abstracts as NEI; ${devBy.get("scifact")?.length} pairs) and Climate-FEVER claim-sentence
pairs (${devBy.get("climate-fever")?.length} pairs). Both systems train on the same ${train.length} train pairs.
Scores from src/evaluation/metrics.ts (official weighted F1).

${table(["system", "dev set", "weighted F1", "Supports F1", "Refutes F1", "NEI F1", "gold NEI → Supports", "ECE (raw → calibrated)"], rows)}

Calibration (fitted on out-of-fold train predictions, never on dev): temperature ${c.temperature.toFixed(3)},
out-of-fold ECE ${f3(c.eceBefore)} → ${f3(c.eceAfter)}; NEI threshold: Supports/Refutes below ${c.minConfidence}
become NEI (tuned out of fold for weighted F1). Selector rationale recall@2 (SciFact train): ${f3(c.selectorRecall)}.

### Ablations (each row retrained; quick schedule: 2 folds, 60 L-BFGS iterations for the stance model)
${table(["variant", "dev set", "weighted F1", "Refutes F1", "gold NEI → Supports"], ablations)}

Families: use_raw = USE-lite vectors u, v of claim and sentence; use_pair = |u-v|, u*v, cos; overlap = token and
bigram overlap; polarity = negation, null-result phrases, direction words, antonyms (and their products with
overlap); hedges; numbers; position = sentence position in the abstract.

### Speed (batch, cold vector cache, USE-lite)
${table(["model", "dev set", "pairs", "seconds", "pairs/s"], speed)}
`,
  };
};
