/**
 * `climatecheck-train narratives`: trains the fast (lexical + taxonomy) and full (+ sentence encoder) models,
 * scores each on the dev split and FLICC test with the official metrics, writes models/narratives/ and its CARD.md.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../data/tables.ts";
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
import {
  countBySource,
  DEV_FRACTION,
  loadNarrativeData,
  NARRATIVES_LAST_JUDGED_CLAIM,
  SPLIT_SALT,
  type StanceExample,
} from "./data.ts";
import type { FeatureFamily } from "./features.ts";
import type { NarrativeModelJson, TextEmbedder } from "./model.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  GATE_THRESHOLD_TIE,
  type GateOptions,
  stanceCounts,
  type TrainOptions,
  trainNarrativeModel,
} from "./train.ts";

/** The shipped variants: fast (no sentence encoder) and full (every family), each with its gate settings. */
export const VARIANTS: readonly {
  name: "fast" | "full";
  file: string;
  families: FeatureFamily[];
  gate: GateOptions;
}[] = [
  {
    name: "fast",
    file: FAST_MODEL_FILE,
    families: ["word", "char", "desc", "cues", "contrast", "markers"],
    gate: DEFAULT_TRAIN_OPTIONS.gate,
  },
  {
    name: "full",
    file: FULL_MODEL_FILE,
    families: ["word", "char", "desc", "cues", "contrast", "use", "markers"],
    // full serves `classify` (CARDS-style text), fast serves `check`: out of fold on the CARDS training rows the
    // classify rule's mean F1 was 0.478 with the written texts at their share and no paired rows, 0.458 with fast's
    // x4 and paired rows (2026-12-03).
    gate: { ...DEFAULT_TRAIN_OPTIONS.gate, contrastWeight: 1, pairWeight: 0 },
  },
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
  // The shared task's output: the classify rule.
  const preds = await classifier.classify(
    gold.map((e) => e.text),
    "classify",
  );
  const s = scoreNarratives(
    preds.map((p, i) => ({ claimId: gold[i].id, codes: p.codes })),
    gold,
  );
  return { macro_f1: s.macro_f1, group_macro_f1: s.group.macro_f1, ...s.errors, claims: s.claims };
}

/**
 * Whether GWSD pays is cross-validated once, on the fast variant (the linear gate); the others follow, also when
 * trained alone (--only full) beside a fast.json already written: then its recorded decision.
 */
export async function gwsdSetting(outDir: string, only?: "fast" | "full"): Promise<TrainOptions["gwsd"]> {
  const fastFile = join(outDir, FAST_MODEL_FILE);
  if (only !== "full" || !existsSync(fastFile)) return DEFAULT_TRAIN_OPTIONS.gwsd;
  return (await readNarrativeModel(fastFile)).crossValidation.gwsd?.used ?? DEFAULT_TRAIN_OPTIONS.gwsd;
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
  try {
    const embedder = encoder ? memoEmbedder(encoder) : undefined;
    let gwsd = await gwsdSetting(outDir, o.only);
    for (const v of variants) {
      log(`training ${v.file} (${v.families.join("+")})`);
      const json = await trainNarrativeModel(data.train, data.stanceTrain, {
        ...DEFAULT_TRAIN_OPTIONS,
        families: v.families,
        gate: v.gate,
        encoder: embedder,
        gwsd,
        log,
      });
      gwsd = json.crossValidation.gwsd?.used ?? gwsd;
      await writeFileAtomic(join(outDir, v.file), JSON.stringify(json));
    }
    await writeNarrativesCard(data, outDir, embedder, log);
  } finally {
    await encoder?.close();
  }
}

/**
 * Scores every model present in `outDir` (retrained now or not; one that needs the sentence encoder only when
 * `embedder` is given) on the dev split and FLICC test, under the classify rule (the task's output), and writes
 * CARD.md.
 */
export async function writeNarrativesCard(
  data: Awaited<ReturnType<typeof loadNarrativeData>>,
  outDir: string,
  embedder?: TextEmbedder,
  log: (msg: string) => void = () => {},
): Promise<void> {
  const rows: string[] = [];
  const models: NarrativeModelJson[] = [];
  for (const v of VARIANTS) {
    const path = join(outDir, v.file);
    if (!existsSync(path)) continue;
    const json = await readNarrativeModel(path);
    if (json.encoder && !embedder) {
      const older =
        json.trainedOn.contrast === undefined ? "trained before the written texts and GWSD, " : "";
      rows.push(
        `| ${v.file} | ${v.families.join(" + ")} | ${older}not scored here (needs the sentence encoder) | | | |`,
      );
      continue;
    }
    models.push(json);
    const classifier = new NarrativeClassifier(json, embedder);
    const dev = await evaluateModel(classifier, data.dev);
    const flicc = await evaluateModel(classifier, data.fliccTest);
    rows.push(
      `| ${v.file} | ${v.families.join(" + ")} | ${dev.macro_f1.toFixed(3)} | ${dev.group_macro_f1.toFixed(3)} | ${flicc.macro_f1.toFixed(3)} | ${flicc.group_macro_f1.toFixed(3)} |`,
    );
    log(`${v.file}: dev macro F1 ${dev.macro_f1.toFixed(3)}, group ${dev.group_macro_f1.toFixed(3)}`);
  }
  await writeFileAtomic(join(outDir, "CARD.md"), card(data, data.stanceTrain, rows, models));
}

/** The gate's issue-23 settings of each model, for the card (absent in models trained before them). */
function gateExtras(models: readonly NarrativeModelJson[]): string {
  const parts = models.map((m) => {
    const g = (m.settings.gate ?? {}) as { contrastWeight?: number; pairWeight?: number };
    const name = m.encoder ? "full" : "fast";
    return `${name}: written contrast texts weigh ${g.contrastWeight ?? 1} times their share, paired rows ${g.pairWeight ?? 0} times their weight`;
  });
  return `Paired training and the written texts' weight (chosen out of fold: fast by the gate's worst ratio, section
   narratives-gate-cv of BENCHMARKS.md; full, which serves \`classify\`, by the classify rule's out-of-fold CARDS mean
   F1, 0.478 at x1 without paired rows against 0.458 at fast's settings): per
   written subject, the differences of a contrarian text's features and a non-contrarian one's are extra rows (both
   signs), so the subject's shared topic cancels. ${parts.join("; ")}.`;
}

function card(
  data: {
    train: readonly NarrativeExample[];
    dev: readonly NarrativeExample[];
    fliccTest: readonly NarrativeExample[];
  },
  stanceTrain: readonly StanceExample[],
  rows: string[],
  models: readonly NarrativeModelJson[],
): string {
  const o = DEFAULT_TRAIN_OPTIONS;
  const shares = (gate: NarrativeModelJson["crossValidation"]["gate"]) =>
    Object.entries(gate)
      .map(([cell, v]) => `${cell} ${v.share.toFixed(3)}`)
      .join(", ");
  const worst = (w?: number) => (w === undefined ? "" : `; worst ratio ${w.toFixed(3)}`);
  const cv = models.flatMap((m) => {
    const c = m.crossValidation;
    const name = m.encoder ? FULL_MODEL_FILE : FAST_MODEL_FILE;
    const gate = m.gate.mlp ? "linear + MLP gate" : "linear gate";
    const lines = [
      `- ${name} (${m.features.config.families.join(" + ")}), ${gate}, threshold ${c.threshold}: ${shares(c.gate)}${worst(c.worst)}`,
    ];
    if (c.linear && c.mlpShipped)
      lines.push(
        `- ${name} with the linear gate alone (as before the MLP), threshold ${c.linear.threshold}: ${shares(c.linear.gate)}${worst(c.linear.worst)}`,
      );
    if (c.linear && !c.mlpShipped)
      lines.push(
        `- ${name}: the linear + MLP gate was tried and did not pay out of fold (worst ratio or a mainstream source's false alarms), so the gate is linear`,
      );
    return lines;
  });
  return `# Narratives classifier (ClimateCheck task 2, CARDS codes)

## What it may be used for
Research and other non-commercial use only. The model is trained on CARDS (CC BY-NC-SA 4.0; its authors do not allow
commercial model training), ClimateBERT and environmental-claims (both CC BY-NC-SA 4.0): it inherits
non-commercial, share-alike terms. ClimateStance carries no stated license (research use). GWSD (Global Warming
Stance Dataset, Luo, Card and Jurafsky, Findings of EMNLP 2020, doi 10.18653/v1/2020.findings-emnlp.296) has no
license file, only its authors' release "for future work": a gate trained on it inherits that unclear status (no
commercial use claimed); whether the shipped gate uses it is said below. The written contrast texts
(\`data/narratives-contrast\`, written for this project by language-model agents from the CARDS taxonomy's
descriptions, no text copied from any data set) are our own, under the repository's MIT license. A commercial user
must retrain without the
restricted sets (\`climatecheck-train narratives\` reads whatever is in the data folder).

## Decision rules
The same scores, two rules. **check** (\`check\`, the HTTP API, the page, which name narratives with fast.json: on the dev splits the full
model's sentence vector reads topic more than stance and it named far more mainstream texts; the default of
\`NarrativeClassifier.classify\`):
a narrative is named exactly when P(narrative) >= 0.5, for precision on mainstream text. **classify** (\`classify\`
and task 2 of \`predict\`, the shared task's output): a narrative is named from the model's classify threshold,
chosen out of fold on the CARDS training rows, with the way it names codes, as the pair that maximises mean F1
over the codes present (thresholds 0.50, 0.45, ..., 0.05, the higher on ties; ways: the hierarchy with the
group-code fallback, the hierarchy with the most likely sub-code as fallback, or "single": the most likely sub-code
of the most likely group, as CARDS gives one code per text), because the gate's precision costs CARDS-style recall.
Chosen:
${models.map((m) => `${m.encoder ? "full" : "fast"} ${m.thresholds.classifyNarrative ?? 0.5}, codes ${m.thresholds.classifyCodes ?? m.fallback} (out-of-fold CARDS mean F1 ${m.crossValidation.classify?.cardsMeanF1.toFixed(3) ?? "-"}, at 0.5 ${m.crossValidation.classify?.cardsMeanF1AtCheck.toFixed(3) ?? "-"})`).join("; ")}.

## Data
From \`../shared/data\`. Codes: CARDS validation (one code per paragraph, 0_0 = none) and FLICC train + val
(level-3 codes cut to level 2; level-1 rows are group-level X_0 examples), split into train / dev by sha1 of the
tokenized text (salt \`${SPLIT_SALT}\`, dev fraction ${DEV_FRACTION}); FLICC test is scored separately. A
ClimateCheck training file, when given to \`climatecheck-train narratives --climatecheck FILE\`, is added to train.
The train claims of our judged set (data/judged/README.md: claims as people post them, accurate with 0_0 and
contrarian with the CARDS codes they assert) are added to train, up to uc-${NARRATIVES_LAST_JUDGED_CLAIM} (the train claims added
later were tried and left out: with them both models named a narrative on an accurate claim users reported, and
mainstream false alarms rose on dev; src/narratives/data.ts); its dev and test claims never train.
The written contrast texts (data/narratives-contrast/README.md): for every CARDS code, texts that assert it and texts
on the same subjects that do not (accurate statements, pro-action posts, rebuttals that state the myth to reject it,
mainstream claims in contrarian-sounding words); split by subject (seeded hash, about 60/20/20); the train split
trains codes and gate, folds by subject; dev and test are only scored (the test split once, by the benchmark).
GWSD news sentences (disagree-majority as narrative, agree-majority as none, the authors' held-out test kept for
dev) join the gate only when cross-validation on train says they pay: the linear gate is fitted with and without
them, and they stay when the worst ratio of error to allowance over the target cells falls. ${models
    .map((m) => {
      const g = m.crossValidation.gwsd;
      if (!g) return "";
      const cv =
        g.worstWith === undefined
          ? "(decided on the fast model's run)"
          : `(worst ratio ${g.worstWith.toFixed(3)} with, ${g.worstWithout?.toFixed(3)} without)`;
      return `${m.encoder ? "Full" : "Fast"}: GWSD ${g.used ? "used" : "left out"} ${cv}.`;
    })
    .join(" ")}
Stance (does a text carry any narrative at all): those rows, plus mainstream climate text that carries none
(ClimateStance Favor tweets, ClimateBERT report paragraphs, environmental-claims sentences, Climate-FEVER SUPPORTS
claims and the Climate-FEVER evidence sentences, titles and first sentences of the arXiv climate abstracts outside
physics.gen-ph) and contrarian text without a code (ClimateStance Against tweets, Climate-FEVER REFUTES claims).
Held out for dev: ClimateStance val, ClimateBERT test, environmental-claims dev + test, Climate-FEVER claims of the
verifier's dev split (with their evidence), 20% of the arXiv papers, GWSD's held-out test sentences, the written
texts' dev and test splits; no dev text is a training row. (The stance counts below list the GWSD rows even when the
gate leaves them out.)

- coded train: ${data.train.length} rows (${JSON.stringify(countBySource(data.train))})
- coded dev: ${data.dev.length} rows (${JSON.stringify(countBySource(data.dev))}); FLICC test: ${data.fliccTest.length} rows
- stance train: ${stanceTrain.length} rows (${JSON.stringify(stanceCounts(stanceTrain))})

## Method
1. **Gate**: a binary logistic regression, P(the text carries any narrative), on the stance rows. Within each class
   every source weighs the square root of its size (no source drowns the others); the classes weigh the same.
   ${gateExtras(models)}
   Platt-scaled on ${o.folds}-fold out-of-fold logits. The decision threshold is chosen out of fold as the one closest
   to meeting every target at once (the smallest worst ratio of false alarms to 0.10 on each mainstream source and
   0.08 on the written non-contrarian texts, and of misses to 0.15 on FLICC and ClimateStance Against and 0.10 on
   the written contrarian texts; of the thresholds within ${GATE_THRESHOLD_TIE * 100}% of that smallest ratio, the
   highest, so a near tie goes to naming fewer narratives), then folded into the scaling by Bayes' rule, so the shown
   probability is calibrated under a prior that makes a narrative threshold/(1 - threshold) times less likely, and
   a narrative is named exactly when it is at least 0.5: the label never contradicts it. Chosen threshold:
   ${models.map((m) => `${m.encoder ? "full" : "fast"} ${m.crossValidation.threshold}`).join(", ")}.
   Full model: a second reader of the same rows, an MLP on the raw USE-lite sentence vector (512 -> 64 ReLU -> 1,
   weighted log loss, Adam, 15 epochs, seeded; src/learning/mlp.ts), trained on the same folds. Its out-of-fold
   logit and the linear one are each standardised (means and standard deviations of the out-of-fold logits, stored
   in the model) and summed; Platt scaling and the threshold choice above then apply to the sum. The trainer ships
   the MLP only when that pays out of fold: the worst ratio above falls, and no mainstream source's false-alarm
   share (Climate-FEVER SUPPORTS claims included) rises by more than 0.01.
   ${models.some((m) => m.gate.mlp) ? "It paid: the shipped full gate is linear + MLP." : "It is not in any model shipped here."}
2. **Codes, given a narrative**: a softmax over the groups 1-5 and one softmax per group over its sub-codes, trained on
   the coded rows that carry a narrative. Every group whose P(group | narrative) passes its threshold (the most likely
   one when none does); within it, every sub-code whose P(code | group) passes its threshold, else the group code X_0.
   Thresholds maximise F1 on ${o.folds}-fold out-of-fold scores of train.
3. Shown probabilities: P(0_0) = 1 - P(narrative); P(X_0) = P(narrative) P(X | narrative); P(X_Y) = P(X_0) P(X_Y | X).

Features, each its own block: word 1-2-gram TF-IDF (max ${o.wordMaxFeatures}) and char 2-5-gram TF-IDF (max
${o.charMaxFeatures}) over every training text, mainstream included; cosine to each code's taxonomy description;
stance cues (direction words paired with the words around them, flipped under negation: "ice:-" for "sea ice is
shrinking", hashed); contrast: for each code, similarity to its proposition minus similarity to its mainstream
rebuttal (src/narratives/rebuttals.ts), in TF-IDF, cue and (full model) USE-lite space; (full model only) the
USE-lite sentence vector; and, in a model whose families list \`markers\`, who says what (src/narratives/markers.ts: a
leading "No,", quoted and reported claims with their stance cues marked as reported, turns, short verdicts; hashed). Each description is a training example of its code and of "narrative", each rebuttal of
"none" (weight ${o.descWeight}). Class weights in the code softmaxes: square-root balanced. L2 ${o.l2} (gate
${o.gate.l2}), full-batch L-BFGS: deterministic.

## Cross-validated figures (out of fold on train): share of texts given a narrative, per source
At each gate's own chosen threshold; the worst ratio is that of a cell's error to its allowance (at most 1 meets
every target).

${cv.join("\n")}

## Dev figures (official task 2 scorer, src/evaluation/metrics.ts; classify rule)

| file | features | dev macro F1 | dev group macro F1 | FLICC test macro F1 | FLICC test group macro F1 |
| --- | --- | --- | --- | --- | --- |
${rows.join("\n")}

Per-source shares on dev, the written texts' dev and test splits, the baselines side by side, intervals and the
hand-written claims: BENCHMARKS.md, sections "narratives" (every system) and "narratives-fast" (no sentence encoder).

## Retrain
\`node --import tsx src/cli/main.ts train narratives\` (add \`--only fast\` for the model without the sentence encoder,
\`--climatecheck FILE\` for the ClimateCheck training file). Training data and folds are fixed, so the result is
the same on every run.
`;
}
