/**
 * `climatecheck train verification`: trains the built-in verifier on the train splits, scores it on the dev
 * splits, and writes models/verification/model.json and its CARD.md (data, method, dev figures, how to retrain).
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MODELS_DIR } from "../data/paths.ts";
import type { SentenceEncoder } from "../encoders/sentence-encoder.ts";
import type { Source } from "./examples.ts";
import { VerificationModel, type VerificationModelJson } from "./model.ts";
import {
  type CalibrationReport,
  type EvaluationResult,
  evaluateModel,
  loadVerificationData,
  trainVerificationModel,
} from "./train.ts";

export interface BuildOptions {
  dataDir?: string;
  outDir?: string;
  openEncoder: () => Promise<SentenceEncoder>;
  log?: (message: string) => void;
}

async function writeAtomic(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

const f3 = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(3));

export async function buildVerificationModel(options: BuildOptions): Promise<void> {
  const log = options.log ?? (() => {});
  const outDir = options.outDir ?? join(MODELS_DIR, "verification");
  const { train, dev } = await loadVerificationData(options.dataDir);
  log(`verification: ${train.length} train pairs, ${dev.length} dev pairs`);
  const encoder = await options.openEncoder();
  try {
    const embed = (texts: string[]) => encoder.embed(texts);
    const { model, calibration } = await trainVerificationModel(train, {
      embed,
      encoderName: encoder.name,
      log,
    });
    const results = new Map<Source, EvaluationResult & { pairs: number }>();
    for (const source of ["scifact", "climate-fever"] as const) {
      const examples = dev.filter((e) => e.source === source);
      results.set(source, {
        ...(await evaluateModel(new VerificationModel(model), examples, embed)),
        pairs: examples.length,
      });
    }
    await mkdir(outDir, { recursive: true });
    await writeAtomic(join(outDir, "model.json"), `${JSON.stringify(model)}\n`);
    await writeAtomic(join(outDir, "CARD.md"), card(model, calibration, results, train.length));
    for (const [source, r] of results)
      log(
        `dev ${source}: weighted F1 ${f3(r.scores.f1_weighted)}, Refutes F1 ${f3(r.scores.per_label.Refutes?.f1)}`,
      );
    log(`wrote ${join(outDir, "model.json")} and CARD.md`);
  } finally {
    await encoder.close();
  }
}

function card(
  model: VerificationModelJson,
  c: CalibrationReport,
  results: Map<Source, EvaluationResult & { pairs: number }>,
  trainPairs: number,
): string {
  const rows = [...results].map(
    ([source, r]) =>
      `| ${source} | ${r.pairs} | ${f3(r.scores.f1_weighted)} | ${f3(r.scores.per_label.Supports?.f1)} | ${f3(r.scores.per_label.Refutes?.f1)} | ${f3(r.scores.per_label["Not Enough Information"]?.f1)} | ${f3(r.neiAsSupports)} | ${f3(r.eceUncalibrated)} → ${f3(r.ece)} |`,
  );
  return `# Built-in claim verifier (task 1.2)

Three-way claim-abstract verification (Supports / Refutes / Not Enough Information) with calibrated
probabilities and rationale sentences. Code: \`src/verification/\` (model.ts is the inference, train.ts the training).

## Data
- SciFact \`claims_train\` + corpus (../shared/data/scifact): evidence abstracts give Supports/Refutes with their
  rationale sentences; the claim's cited non-evidence abstracts and its most TF-IDF-similar non-evidence abstract
  give NEI.
- Climate-FEVER dev file (../shared/data/climate-fever): each (claim, evidence sentence) is a one-sentence
  abstract with the sentence's label.
- Deterministic train/dev split by claim id (sha1, salt "verification", 20 % dev); train pairs whose claim text
  repeats a dev claim under another id are dropped. ${trainPairs} training pairs. Dev pairs are never used for
  training, calibration or decision tuning.

## Method
1. Selector: binary logistic regression on lexical features (overlap, polarity, hedges, numbers, position) ranks
   the abstract sentences; the top ${model.candidates} go through the sentence encoder (rationale recall of the
   candidates on SciFact train: ${f3(c.selectorRecall)}).
2. Stance: multinomial logistic regression (L2, balanced class weights, standardised inputs) on USE-lite vectors
   of claim u and sentence v as (u, v, |u-v|, u*v, cos) plus the lexical features; trained on gold rationale
   sentences (their pair label) and non-rationale candidates (NEI).
3. Pair-level TF-IDF: word 1-2 gram TF-IDF of the claim and of the whole abstract (two blocks + cosine) into a
   multinomial logistic regression (the benchmark baseline's model), stacked as out-of-fold probabilities.
4. Pair: standardised multinomial logistic regression on the candidates' stance probabilities, the best
   candidate's lexical cues, cues aggregated over all sentences and the TF-IDF probabilities, all from 5-fold
   out-of-fold predictions (by claim id).
5. Calibration: temperature T = ${c.temperature.toFixed(3)} fitted on out-of-fold pair logits (ECE
   ${f3(c.eceBefore)} → ${f3(c.eceAfter)}). Decision: argmax of weight × probability with weights (Supports /
   Refutes / NEI) ${c.classWeights.join(" / ")} for multi-sentence abstracts and ${c.classWeightsSingle.join(" / ")} for
   one-sentence ones, each tuned on the same out-of-fold predictions for weighted F1 minus 2 × the share of NEI pairs
   called Supports beyond the TF-IDF model's own out-of-fold share.
6. Cascade (speed): ${
    model.cascade
      ? `the same pair model without the stance group runs first; a pair it calls NEI with probability ≥
   ${model.cascade.neiThreshold} is NEI without the sentence encoder (${(100 * c.cascadeSkipped).toFixed(1)} % of train pairs out of fold,
   threshold: the lowest costing at most 0.005 of the out-of-fold objective).`
      : "none (no threshold kept the out-of-fold objective)."
  }

## Dev figures
| dev set | pairs | weighted F1 | Supports F1 | Refutes F1 | NEI F1 | gold NEI → Supports | ECE raw → calibrated |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Baseline, ablations and speed: BENCHMARKS.md, section "Claim verification" (\`npm run bench -- verification\`).

## Retrain
\`climatecheck train verification\` (or \`npm run climatecheck -- train verification\`): deterministic; about 10-20
minutes on 2 busy cores once the sentence vectors are cached (the stance and TF-IDF model fits are the cost).
`;
}
