/**
 * `climatecheck train narratives`: trains the fast (lexical + taxonomy) and full (+ sentence encoder) models,
 * scores each on the dev split and FLICC test with the official metrics, writes models/narratives/ and its CARD.md.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { scoreNarratives } from "../evaluation/metrics.ts";
import type { NarrativeExample } from "../types.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "./classifier.ts";
import { countBySource, DEV_FRACTION, loadNarrativeData, SPLIT_SALT } from "./data.ts";
import type { FeatureFamily } from "./features.ts";
import type { TextEmbedder } from "./model.ts";
import { DEFAULT_TRAIN_OPTIONS, trainNarrativeModel } from "./train.ts";

/** The shipped variants: fast (no sentence encoder) and full (every family). */
export const VARIANTS: readonly { name: "fast" | "full"; file: string; families: FeatureFamily[] }[] = [
  { name: "fast", file: FAST_MODEL_FILE, families: ["word", "char", "desc"] },
  { name: "full", file: FULL_MODEL_FILE, families: ["word", "char", "desc", "use"] },
];

export interface BuildOptions {
  dataDir?: string;
  /** A ClimateCheck training file (claim_id, claim, narrative), added to the training rows. */
  climatecheckTrain?: string;
  outDir?: string;
  /** Train only this variant (the other one, if present in outDir, is still scored for the card). */
  only?: "fast" | "full";
  openEncoder?: () => Promise<SentenceEncoder>;
  log?: (msg: string) => void;
}

/** Embeds each distinct text once per process (training, tuning and evaluation reuse the same texts). */
export function memoEmbedder(encoder: TextEmbedder): TextEmbedder {
  const cache = new Map<string, Float32Array>();
  return {
    name: encoder.name,
    async embed(texts: string[]): Promise<Float32Array[]> {
      const missing = [...new Set(texts.filter((t) => !cache.has(t)))];
      if (missing.length > 0) {
        const vectors = await encoder.embed(missing);
        missing.forEach((t, i) => {
          cache.set(t, vectors[i]);
        });
      }
      return texts.map((t) => cache.get(t) as Float32Array);
    },
  };
}

export interface Figures {
  macro_f1: number;
  group_macro_f1: number;
  exact: number;
  right_group: number;
  wrong_group: number;
  claims: number;
}

export async function evaluateModel(
  classifier: NarrativeClassifier,
  gold: readonly NarrativeExample[],
): Promise<Figures> {
  const preds = await classifier.classify(gold.map((e) => e.text));
  const s = scoreNarratives(
    preds.map((p, i) => ({ claimId: gold[i].id, codes: p.codes })),
    gold,
  );
  return { macro_f1: s.macro_f1, group_macro_f1: s.group.macro_f1, ...s.errors, claims: s.claims };
}

export async function buildNarrativeModels(o: BuildOptions = {}): Promise<void> {
  const log = o.log ?? (() => {});
  const outDir = o.outDir ?? NARRATIVES_MODEL_DIR;
  const data = await loadNarrativeData(o.dataDir, o.climatecheckTrain);
  log(
    `narratives: ${data.train.length} train, ${data.dev.length} dev, ${data.fliccTest.length} FLICC test rows`,
  );
  await mkdir(outDir, { recursive: true });
  const variants = VARIANTS.filter((v) => !o.only || v.name === o.only);
  const needsEncoder = VARIANTS.some((v) => v.families.includes("use"));
  const encoder = needsEncoder && o.openEncoder ? await o.openEncoder() : undefined;
  const rows: string[] = [];
  try {
    const embedder = encoder ? memoEmbedder(encoder) : undefined;
    for (const v of variants) {
      log(`training ${v.file} (${v.families.join("+")})`);
      const json = await trainNarrativeModel(data.train, {
        ...DEFAULT_TRAIN_OPTIONS,
        families: v.families,
        encoder: embedder,
        log,
      });
      await writeFile(join(outDir, v.file), JSON.stringify(json));
    }
    // The card scores every model present, retrained now or not.
    for (const v of VARIANTS) {
      const path = join(outDir, v.file);
      if (!existsSync(path)) continue;
      const json = await readNarrativeModel(path);
      if (json.encoder && !embedder) continue;
      const classifier = new NarrativeClassifier(json, embedder);
      const dev = await evaluateModel(classifier, data.dev);
      const flicc = await evaluateModel(classifier, data.fliccTest);
      rows.push(
        `| ${v.file} | ${v.families.join(" + ")} | ${dev.macro_f1.toFixed(3)} | ${dev.group_macro_f1.toFixed(3)} | ${flicc.macro_f1.toFixed(3)} | ${flicc.group_macro_f1.toFixed(3)} |`,
      );
      log(`${v.file}: dev macro F1 ${dev.macro_f1.toFixed(3)}, group ${dev.group_macro_f1.toFixed(3)}`);
    }
  } finally {
    await encoder?.close();
  }
  await writeFile(join(outDir, "CARD.md"), card(data.train, data.dev, data.fliccTest, rows));
}

function card(
  train: readonly NarrativeExample[],
  dev: readonly NarrativeExample[],
  fliccTest: readonly NarrativeExample[],
  rows: string[],
): string {
  const o = DEFAULT_TRAIN_OPTIONS;
  return `# Narratives classifier (ClimateCheck task 2, CARDS codes)

## Data
From \`../shared/data\`: CARDS validation (one code per paragraph, 0_0 = none) and FLICC train + val (level-3 codes cut
to level 2; level-1 rows are group-level X_0 examples), split into train / dev by sha1 of the tokenized text
(salt \`${SPLIT_SALT}\`, dev fraction ${DEV_FRACTION}). FLICC test is scored separately. A ClimateCheck training file,
when given to \`climatecheck train narratives --climatecheck FILE\`, is added to train.

- train: ${train.length} rows (${JSON.stringify(countBySource(train))})
- dev: ${dev.length} rows (${JSON.stringify(countBySource(dev))})
- FLICC test: ${fliccTest.length} rows

## Method
Hierarchical: a softmax logistic regression over the groups 0-5, and one softmax per group over its sub-codes. A
group is predicted when P(group) passes its threshold (0_0 when none does); within it, every sub-code whose
P(code | group) passes its threshold; none passing gives the group code X_0. Thresholds maximise per-group and
per-code F1 on ${o.folds}-fold out-of-fold scores of train (dev is never used for fitting or tuning).
Features, each block L2-normalised: word 1-2-gram TF-IDF (max ${o.wordMaxFeatures}), char 2-5-gram TF-IDF within
words (max ${o.charMaxFeatures}), cosine similarity to each code's taxonomy description, and (full model only)
USE-lite sentence vectors plus their cosine to each description. Each description is also a training example of its
code (weight ${o.descWeight}), which gives the codes without data (e.g. 1_5) a class. Imbalance: square-root balanced
class weights. L2 ${o.l2}, full-batch L-BFGS: deterministic.

## Dev figures (official task 2 scorer, src/evaluation/metrics.ts)

| file | features | dev macro F1 | dev group macro F1 | FLICC test macro F1 | FLICC test group macro F1 |
| --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Baseline comparison, per-code table and ablations: BENCHMARKS.md, section "narratives".

## Retrain
\`node --import tsx src/cli/main.ts train narratives\` (add \`--fast-only\` without the sentence encoder,
\`--climatecheck FILE\` for the ClimateCheck training file). Training data and folds are fixed, so the result is
the same on every run.
`;
}
