/**
 * Narratives (task 2): the shipped hierarchical classifier (fast and full) beside a TF-IDF + one-vs-rest logistic
 * regression baseline trained on the same rows, on the dev split and on FLICC test; ablation per feature family
 * (each retrained the same way); per-code F1; error split; batch speed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { type NarrativeScores, scoreNarratives } from "../src/evaluation/metrics.ts";
import { trainBaseline } from "../src/narratives/baseline.ts";
import { memoEmbedder } from "../src/narratives/build.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import type { FeatureFamily } from "../src/narratives/features.ts";
import type { TextEmbedder } from "../src/narratives/model.ts";
import { DEFAULT_TRAIN_OPTIONS, trainNarrativeModel } from "../src/narratives/train.ts";
import { NARRATIVE_CODES } from "../src/taxonomy/cards.ts";
import type { NarrativeExample } from "../src/types.ts";
import { type Bench, table } from "./report.ts";

const log = (m: string) => process.stderr.write(`${m}\n`);

function score(preds: string[][], gold: readonly NarrativeExample[]): NarrativeScores {
  return scoreNarratives(
    preds.map((codes, i) => ({ claimId: gold[i].id, codes })),
    gold,
  );
}

const row = (name: string, dev: NarrativeScores, flicc: NarrativeScores) => {
  const r = rowOf(name, dev, flicc);
  log(`  ${r.map((v) => (typeof v === "number" ? v.toFixed(3) : v)).join(" | ")}`);
  return r;
};

const rowOf = (name: string, dev: NarrativeScores, flicc: NarrativeScores): (string | number)[] => [
  name,
  dev.macro_f1,
  dev.group.macro_f1,
  `${dev.errors.exact} / ${dev.errors.right_group} / ${dev.errors.wrong_group}`,
  flicc.macro_f1,
  flicc.group.macro_f1,
  `${flicc.errors.exact} / ${flicc.errors.right_group} / ${flicc.errors.wrong_group}`,
];

/** Claims per second of classify() over the texts, repeated until at least two seconds have passed. */
async function speed(classifier: NarrativeClassifier, texts: string[]): Promise<number> {
  const started = Date.now();
  let n = 0;
  do {
    await classifier.classify(texts);
    n += texts.length;
  } while (Date.now() - started < 2000);
  return n / ((Date.now() - started) / 1000);
}

export const bench: Bench = async () => {
  const data = await loadNarrativeData();
  const devTexts = data.dev.map((e) => e.text);
  const fliccTexts = data.fliccTest.map((e) => e.text);
  const evalModel = async (c: NarrativeClassifier) => ({
    dev: score(
      (await c.classify(devTexts)).map((p) => p.codes),
      data.dev,
    ),
    flicc: score(
      (await c.classify(fliccTexts)).map((p) => p.codes),
      data.fliccTest,
    ),
  });

  log("baseline");
  const baseline = trainBaseline(data.train);
  const base = {
    dev: score(
      devTexts.map((t) => baseline.predict(t)),
      data.dev,
    ),
    flicc: score(
      fliccTexts.map((t) => baseline.predict(t)),
      data.fliccTest,
    ),
  };

  const encoder = await openUseLite();
  const embedder: TextEmbedder = memoEmbedder(encoder);
  log("ablations");
  const ablations: (string | number)[][] = [];
  const variants: [string, FeatureFamily[]][] = [
    ["fast - word", ["char", "desc"]],
    ["fast - char", ["word", "desc"]],
    ["fast - desc (no taxonomy descriptions)", ["word", "char"]],
  ];
  variants.push(["use + desc only (no n-grams)", ["desc", "use"]]);
  for (const [name, families] of variants) {
    log(`  ${name}`);
    const json = await trainNarrativeModel(data.train, {
      ...DEFAULT_TRAIN_OPTIONS,
      families,
      encoder: embedder,
    });
    const s = await evalModel(new NarrativeClassifier(json, embedder));
    ablations.push(row(name, s.dev, s.flicc));
  }
  const fullPath = join(NARRATIVES_MODEL_DIR, FULL_MODEL_FILE);
  const fast = new NarrativeClassifier(await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE)));
  const full = existsSync(fullPath)
    ? new NarrativeClassifier(await readNarrativeModel(fullPath), embedder)
    : undefined;
  const rows: (string | number)[][] = [
    row("baseline: TF-IDF word+char, one-vs-rest LR", base.dev, base.flicc),
  ];
  const fastScores = await evalModel(fast);
  rows.push(row("ours --fast (word + char + desc), shipped", fastScores.dev, fastScores.flicc));
  const fullScores = full ? await evalModel(full) : undefined;
  if (fullScores)
    rows.push(row("ours full (word + char + desc + use), shipped", fullScores.dev, fullScores.flicc));
  const best = fullScores ?? fastScores;

  for (const [name, c] of [
    ["fast, argmax sub-code instead of X_0 fallback", fast],
    ["full, argmax sub-code instead of X_0 fallback", full],
  ] as const) {
    if (!c) continue;
    const s = await evalModel(new NarrativeClassifier({ ...c.json, fallback: "argmax" }, embedder));
    ablations.push(row(name, s.dev, s.flicc));
  }

  const perCode = NARRATIVE_CODES.filter((c) => best.dev.per_label[c] || base.dev.per_label[c]).map((c) => {
    const o = best.dev.per_label[c];
    const b = base.dev.per_label[c];
    return [
      c,
      o?.support ?? b?.support ?? 0,
      b ? b.f1 : "-",
      o ? o.f1 : "-",
      o ? o.precision : "-",
      o ? o.recall : "-",
    ];
  });

  log("speed");
  const speedTexts = [...fliccTexts, ...devTexts.filter((t) => t.length < 300)].slice(0, 600);
  const fastSpeed = await speed(fast, speedTexts);
  log(`  --fast: ${fastSpeed.toFixed(0)} claims/s`);
  let fullSpeed: number | undefined;
  if (full) {
    // A fresh encoder without the disk cache: every text goes through USE-lite, as for new claims.
    const cold = await openUseLite({ cacheDir: false });
    log("  cold encoder open");
    try {
      const classifier = new NarrativeClassifier(full.json, cold);
      await classifier.classify(fliccTexts.slice(0, 8)); // load the model (and workers) before timing
      const texts = fliccTexts.slice(8);
      const started = Date.now();
      await classifier.classify(texts);
      fullSpeed = texts.length / ((Date.now() - started) / 1000);
      log(`  full: ${fullSpeed.toFixed(1)} claims/s`);
    } finally {
      await cold.close();
    }
  }
  await encoder.close();
  const header = [
    "system",
    "dev macro F1",
    "dev group macro F1",
    "dev exact / right group / wrong group",
    "FLICC test macro F1",
    "FLICC test group macro F1",
    "FLICC exact / right group / wrong group",
  ];
  const bestName = fullScores ? "full" : "--fast";
  const markdown = `Data: ${data.train.length} train rows (CARDS validation + FLICC train/val, hash split), ${data.dev.length} dev rows,
FLICC test ${data.fliccTest.length} rows. All figures from the official scorer (src/evaluation/metrics.ts). The shipped
models are those in models/narratives (\`climatecheck train narratives\`); the baseline and ablations are trained here
on the same train rows. Error split = claims whose predicted code set is exact / has the right groups but wrong codes /
has wrong groups.

${table(header, rows)}

Gain over the baseline (${bestName}): dev macro F1 ${(best.dev.macro_f1 - base.dev.macro_f1).toFixed(3)}, dev group macro F1
${(best.dev.group.macro_f1 - base.dev.group.macro_f1).toFixed(3)}; FLICC test macro F1 ${(best.flicc.macro_f1 - base.flicc.macro_f1).toFixed(3)},
group ${(best.flicc.group.macro_f1 - base.flicc.group.macro_f1).toFixed(3)}.${fullScores ? "" : "\n\nThe full model (sentence encoder) was not in models/narratives when this ran: its rows are missing."}

### Ablations (retrained, same split and tuning)

${table(header, ablations)}

### Per-code F1 on dev (${bestName} vs baseline)

${table(["code", "dev support", "baseline F1", "ours F1", "ours precision", "ours recall"], perCode)}

### Speed (batch, one process, ${speedTexts.length} texts)

${table(
  ["mode", "claims/s"],
  [
    ["--fast (no sentence encoder)", fastSpeed.toFixed(0)],
    ...(fullSpeed
      ? [
          [
            `full (USE-lite, no vector cache, ${fliccTexts.length - 8} FLICC test texts)`,
            fullSpeed.toFixed(1),
          ],
        ]
      : []),
  ],
)}
`;
  return {
    id: "narratives",
    title: "Narratives (task 2): hierarchical CARDS classifier",
    command: "npm run bench -- narratives",
    markdown,
  };
};
