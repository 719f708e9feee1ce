/**
 * Narratives (task 2): the shipped stance-gated models (fast and full) beside the two strongest plain baselines,
 * trained on the same rows in this run: word + char TF-IDF one-vs-rest argmax, and the same with USE-lite vectors.
 * Dev sets (never used for fitting or tuning): held-out parts of every source. Figures: the share of texts given a
 * narrative per source (mainstream: should be low; contrarian: high), CARDS dev mean F1 over the codes present and
 * group macro F1, FLICC test macro F1, ECE of P(narrative), each with a bootstrap 95% interval; ablations retrained
 * the same way; the twenty hand-written claims. Speed: bench `narratives-speed`.
 */
import { join } from "node:path";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { type Interval, itemInterval } from "../src/evaluation/bootstrap.ts";
import { scoreNarratives } from "../src/evaluation/metrics.ts";
import { expectedCalibrationError } from "../src/learning/calibration.ts";
import { type Baseline, trainBaseline } from "../src/narratives/baseline.ts";
import { memoEmbedder } from "../src/narratives/build.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { loadNarrativeData, MAINSTREAM_SOURCES, type StanceExample } from "../src/narratives/data.ts";
import { NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
import type { FeatureFamily } from "../src/narratives/features.ts";
import type { TextEmbedder } from "../src/narratives/model.ts";
import { DEFAULT_TRAIN_OPTIONS, stanceCell, trainNarrativeModel } from "../src/narratives/train.ts";
import { groupOf, NO_NARRATIVE } from "../src/taxonomy/cards.ts";
import type { NarrativeExample } from "../src/types.ts";
import { HAND_CLAIMS } from "./narratives-claims.ts";
import { type Bench, table } from "./report.ts";

const log = (m: string) => process.stderr.write(`${m}\n`);

interface Prediction {
  codes: string[];
  narrative: number;
}
type Predict = (texts: string[]) => Promise<Prediction[]>;

/** Contrarian cells: the share given a narrative should be high. Every other cell: low. */
const CONTRARIAN_CELLS = ["flicc", "stance-against", "cf-refutes", "cards:narrative"];
const MAINSTREAM_CELLS: readonly string[] = MAINSTREAM_SOURCES;
const REPORTED_CELLS = [...MAINSTREAM_CELLS, "cards:none", ...CONTRARIAN_CELLS];

const fmt = (x: number) => x.toFixed(3);
const withInterval = (i: Interval) => `${fmt(i.value)} (${fmt(i.low)}-${fmt(i.high)})`;

/**
 * Mean F1 over the codes present in the gold, on the rows in `idx` (the official scorer; a row repeated by a resample
 * counts again, so each sampled row gets an id of its own).
 */
function meanF1OverPresent(
  preds: readonly string[][],
  gold: readonly string[][],
  idx: readonly number[],
): number {
  const scores = scoreNarratives(
    idx.map((i, k) => ({ claimId: String(k), codes: preds[i] })),
    idx.map((i, k) => ({ id: String(k), text: "", codes: gold[i] })),
  );
  const present = Object.values(scores.per_label).filter((p) => p.support > 0);
  return present.length ? present.reduce((s, p) => s + p.f1, 0) / present.length : 0;
}

interface Figures {
  shares: Record<string, Interval>;
  cardsMeanF1: Interval;
  cardsGroupMacroF1: number;
  fliccMacroF1: number;
  ece: number;
  maxMainstream: number;
  minContrarian: number;
}

async function evaluate(
  predict: Predict,
  stanceDev: readonly StanceExample[],
  cardsDev: readonly NarrativeExample[],
  fliccTest: readonly NarrativeExample[],
): Promise<Figures> {
  const stancePreds = await predict(stanceDev.map((e) => e.text));
  const shares: Record<string, Interval> = {};
  for (const cell of REPORTED_CELLS) {
    const rows = stanceDev.map((e, i) => [e, i] as const).filter(([e]) => stanceCell(e) === cell);
    const flagged = rows.map(([, i]) => !stancePreds[i].codes.includes(NO_NARRATIVE));
    if (rows.length === 0) continue;
    shares[cell] = itemInterval(flagged.length, (idx) => idx.filter((i) => flagged[i]).length / idx.length);
  }
  const cardsPreds = (await predict(cardsDev.map((e) => e.text))).map((p) => p.codes);
  const cardsGold = cardsDev.map((e) => e.codes);
  const cardsMeanF1 = itemInterval(cardsDev.length, (idx) => meanF1OverPresent(cardsPreds, cardsGold, idx));
  const asRun = (preds: string[][], gold: readonly NarrativeExample[]) =>
    scoreNarratives(
      preds.map((codes, i) => ({ claimId: gold[i].id, codes })),
      gold,
    );
  const cardsScores = asRun(cardsPreds, cardsDev);
  const fliccScores = asRun(
    (await predict(fliccTest.map((e) => e.text))).map((p) => p.codes),
    fliccTest,
  );
  const ece = expectedCalibrationError(
    stancePreds.map((p) => [1 - p.narrative, p.narrative]),
    stanceDev.map((e) => (e.narrative ? 1 : 0)),
  );
  const value = (c: string) => shares[c]?.value ?? Number.NaN;
  return {
    shares,
    cardsMeanF1,
    cardsGroupMacroF1: cardsScores.group.macro_f1,
    fliccMacroF1: fliccScores.macro_f1,
    ece,
    maxMainstream: Math.max(...MAINSTREAM_CELLS.map(value)),
    minContrarian: Math.min(value("flicc"), value("stance-against")),
  };
}

const classifierPredict =
  (c: NarrativeClassifier): Predict =>
  async (texts) =>
    (await c.classify(texts)).map((p) => ({ codes: p.codes, narrative: p.narrative }));

function baselinePredict(b: Baseline, embedder?: TextEmbedder): Predict {
  return async (texts) => {
    const emb = embedder ? await embedder.embed(texts) : undefined;
    return texts.map((t, i) => b.predict(t, emb?.[i]));
  };
}

export const bench: Bench = async () => {
  const data = await loadNarrativeData();
  const cardsDev = data.dev.filter((e) => e.id.startsWith("cards:"));
  const encoder = await openUseLite();
  const embedder = memoEmbedder(encoder);
  const systems: { name: string; figures: Figures; predict: Predict }[] = [];
  const run = async (name: string, predict: Predict) => {
    log(`  evaluating ${name}`);
    const figures = await evaluate(predict, data.stanceDev, cardsDev, data.fliccTest);
    systems.push({ name, figures, predict });
    log(
      `    max mainstream ${fmt(figures.maxMainstream)}, min contrarian ${fmt(figures.minContrarian)}, CARDS mean F1 ${fmt(figures.cardsMeanF1.value)}`,
    );
  };

  // Baselines: the code rows plus every mainstream training text as 0_0 (uncoded contrarian rows have no code).
  const baselineTrain: NarrativeExample[] = [
    ...data.train,
    ...data.stanceTrain
      .filter((e) => !e.narrative && e.source !== "cards")
      .map((e) => ({ id: e.id, text: e.text, codes: [NO_NARRATIVE] })),
  ];
  log(`baselines on ${baselineTrain.length} rows`);
  await run(
    "baseline: word + char TF-IDF, one-vs-rest argmax",
    baselinePredict(trainBaseline(baselineTrain)),
  );
  const trainTexts = baselineTrain.map((e) => e.text);
  const trainEmb = await embedder.embed(trainTexts);
  const embMap = new Map(trainTexts.map((t, i) => [t, trainEmb[i]]));
  await run(
    "baseline: word + char TF-IDF + USE-lite, one-vs-rest argmax",
    baselinePredict(trainBaseline(baselineTrain, embMap), embedder),
  );

  const fast = new NarrativeClassifier(await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE)));
  const full = new NarrativeClassifier(
    await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FULL_MODEL_FILE)),
    embedder,
  );
  await run(
    `ours --fast (${fast.json.features.config.families.join(" + ")}), shipped`,
    classifierPredict(fast),
  );
  await run(
    `ours full (${full.json.features.config.families.join(" + ")}), shipped`,
    classifierPredict(full),
  );
  const strongest = systems
    .slice(0, 2)
    .reduce((a, b) => (b.figures.cardsMeanF1.value > a.figures.cardsMeanF1.value ? b : a));
  const ours = systems[3];

  log("ablations");
  const fullFamilies = full.json.features.config.families;
  const without = (f: FeatureFamily) => fullFamilies.filter((x) => x !== f);
  const ablations: [string, FeatureFamily[], StanceExample[]][] = [
    [
      "full, gate without the mainstream and uncoded data (CARDS + FLICC only)",
      fullFamilies,
      data.stanceTrain.filter((e) => e.source === "cards" || e.source === "flicc"),
    ],
    ["full - cues", without("cues"), data.stanceTrain],
    ["full - contrast (and no rebuttal prototypes' features)", without("contrast"), data.stanceTrain],
  ];
  for (const [name, families, stance] of ablations) {
    log(`  ${name}`);
    const json = await trainNarrativeModel(data.train, stance, {
      ...DEFAULT_TRAIN_OPTIONS,
      ...(full.json.settings as object),
      families,
      encoder: embedder,
    });
    await run(name, classifierPredict(new NarrativeClassifier(json, embedder)));
  }

  log("hand-written claims");
  const handTexts = HAND_CLAIMS.flatMap((h) => [h.mainstream, h.contrarian]);
  const show = (p: Prediction) => `${p.codes.join(", ")} (${fmt(p.narrative)})`;
  const oursHand = await ours.predict(handTexts);
  const baseHand = await strongest.predict(handTexts);
  const handRows = HAND_CLAIMS.map((h, k) => [
    h.topic,
    h.mainstream,
    show(oursHand[2 * k]),
    show(baseHand[2 * k]),
    h.contrarian,
    h.expected,
    show(oursHand[2 * k + 1]),
    show(baseHand[2 * k + 1]),
  ]);
  const mainstreamFlagged = HAND_CLAIMS.filter(
    (_, k) => !oursHand[2 * k].codes.includes(NO_NARRATIVE),
  ).length;
  const contrarianFound = HAND_CLAIMS.filter(
    (_, k) => !oursHand[2 * k + 1].codes.includes(NO_NARRATIVE),
  ).length;
  const contrarianGroup = HAND_CLAIMS.filter((h, k) =>
    oursHand[2 * k + 1].codes.some((c) => c !== NO_NARRATIVE && groupOf(c) === groupOf(h.expected)),
  ).length;
  await encoder.close();

  const cellHeader = REPORTED_CELLS.filter((c) => ours.figures.shares[c]);
  const sharesTable = table(
    [
      "system",
      ...cellHeader.map((c) => `${c} (${data.stanceDev.filter((e) => stanceCell(e) === c).length})`),
    ],
    systems.map((s) => [
      s.name,
      ...cellHeader.map((c) => (s.figures.shares[c] ? withInterval(s.figures.shares[c]) : "-")),
    ]),
  );
  const qualityTable = table(
    [
      "system",
      "CARDS dev mean F1 over codes present",
      "CARDS dev group macro F1",
      "FLICC test macro F1",
      "ECE of P(narrative), stance dev",
      "worst mainstream share",
      "lowest contrarian share (FLICC, Against)",
    ],
    systems.map((s) => [
      s.name,
      withInterval(s.figures.cardsMeanF1),
      fmt(s.figures.cardsGroupMacroF1),
      fmt(s.figures.fliccMacroF1),
      fmt(s.figures.ece),
      fmt(s.figures.maxMainstream),
      fmt(s.figures.minContrarian),
    ]),
  );
  const gain = ours.figures.cardsMeanF1.value - strongest.figures.cardsMeanF1.value;
  const markdown = `Training rows: ${data.train.length} coded (CARDS validation + FLICC train/val, hash split) and
${data.stanceTrain.length} stance rows (those plus the training parts of ClimateStance, ClimateBERT, environmental-claims,
Climate-FEVER claims and evidence, arXiv titles and first sentences). Dev, never used for fitting or tuning: ClimateStance
val, ClimateBERT test, environmental-claims dev + test, the Climate-FEVER claims of the verifier's dev split and their
evidence, 20% of the arXiv papers, CARDS dev (${cardsDev.length}) and FLICC test (${data.fliccTest.length}). The shipped
models are those in models/narratives (\`climatecheck train narratives\`); the baselines and ablations are trained in
this run on the same rows (the baselines get every coded row and every mainstream text as 0_0; texts with a
narrative but no code, ClimateStance Against and Climate-FEVER REFUTES claims, cannot train a one-vs-rest code model).
Intervals: bootstrap 95%, 1,000 resamples of the texts.

### Share of texts given a narrative, per dev source (column: rows)

Mainstream sources (want at most 0.10): ${MAINSTREAM_CELLS.join(", ")}. \`cards:none\` are contrarian-blog paragraphs
that make no CARDS claim. Contrarian (want at least 0.85 for FLICC and ClimateStance Against): ${CONTRARIAN_CELLS.join(", ")}.

${sharesTable}

### Codes, calibration

${qualityTable}

CARDS dev mean F1 over codes present, ours full minus the strongest baseline (${strongest.name}): ${gain >= 0 ? "+" : ""}${fmt(gain)}.
ECE: 10 equal-width bins of max(P, 1 - P) over the pooled stance dev rows; a narrative is named exactly when
P(narrative) >= ${NARRATIVE_THRESHOLD}, so the label never contradicts the probability shown.

### Hand-written claims (bench/narratives-claims.ts; ours full vs ${strongest.name})

Codes, with P(narrative) in brackets. Mainstream claims given a narrative by ours: ${mainstreamFlagged} of ${HAND_CLAIMS.length};
contrarian claims given one: ${contrarianFound} of ${HAND_CLAIMS.length}, in the expected group: ${contrarianGroup}.

${table(["topic", "mainstream claim", "ours", "baseline", "contrarian claim", "expected", "ours", "baseline"], handRows)}
`;
  return {
    id: "narratives",
    title: "Narratives (task 2): stance-gated CARDS classifier against the strongest plain baselines",
    command: "npm run bench -- narratives",
    markdown,
  };
};
