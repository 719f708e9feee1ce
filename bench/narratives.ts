/**
 * Narratives (task 2): the shipped stance-gated models (fast and full), under each decision rule (`check`: precision
 * on mainstream text; `classify`: the shared task's output, CARDS-style recall), beside the plain baselines trained
 * on the same rows in this run: word + char TF-IDF one-vs-rest argmax, with and without USE-lite vectors, on the
 * coded rows with every mainstream text as 0_0 and on the coded rows alone. Dev sets (never used for fitting or
 * tuning): held-out parts of every source, the written contrast texts' dev split, CARDS dev, FLICC test; the written
 * test split is read once, here, at the end. Figures: the share of texts given a narrative per source, CARDS dev mean
 * F1 over the codes present, FLICC test macro F1, ECE of P(narrative), the written texts' shares and right first
 * code, each with a bootstrap 95% interval; the twenty hand-written claims. Speed: bench `narratives-speed`.
 */
import { join } from "node:path";
import { type JudgedClaim, ownDataFiles, readJudgedClaims, SHORT_PLAIN } from "../src/data/judged.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { type Interval, itemInterval } from "../src/evaluation/bootstrap.ts";
import { meanF1OverPresent, scoreNarratives } from "../src/evaluation/metrics.ts";
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
import {
  type ContrastText,
  contrastSplit,
  loadNarrativeData,
  MAINSTREAM_SOURCES,
  type NarrativeData,
  type StanceExample,
} from "../src/narratives/data.ts";
import { type DecisionRule, NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
import type { TextEmbedder } from "../src/narratives/model.ts";
import { stanceCell } from "../src/narratives/train.ts";
import { groupOf, NO_NARRATIVE } from "../src/taxonomy/cards.ts";
import type { NarrativeExample } from "../src/types.ts";
import { HAND_CLAIMS } from "./narratives-claims.ts";
import { type Bench, type BenchSection, loadAverage, table } from "./report.ts";

const log = (m: string) => process.stderr.write(`${m}\n`);

export interface Prediction {
  codes: string[];
  narrative: number;
  /** The most likely code named (the argmax for a baseline), or 0_0. */
  first: string;
}
export type Predict = (texts: string[]) => Promise<Prediction[]>;

/** Contrarian cells: the share given a narrative should be high. Every other cell: low. */
const CONTRARIAN_CELLS = ["flicc", "stance-against", "cf-refutes", "cards:narrative", "gwsd-disagree"];
const MAINSTREAM_CELLS: readonly string[] = MAINSTREAM_SOURCES;
const REPORTED_CELLS = [...MAINSTREAM_CELLS, "gwsd-agree", "cards:none", ...CONTRARIAN_CELLS];

const fmt = (x: number) => x.toFixed(3);
export const withInterval = (i: Interval) => `${fmt(i.value)} (${fmt(i.low)}-${fmt(i.high)})`;
/** The share of true flags, with its bootstrap interval over the items. */
export const share = (flags: readonly boolean[]) =>
  itemInterval(flags.length, (idx) => (idx.length ? idx.filter((i) => flags[i]).length / idx.length : 0));
/** Share of `a` minus share of `b` over the same items, the same resamples for both (paired). */
export function shareGain(a: readonly boolean[], b: readonly boolean[]): Interval {
  if (a.length !== b.length) throw new Error(`shareGain: ${a.length} vs ${b.length} items`);
  return itemInterval(a.length, (idx) =>
    idx.length ? idx.reduce((s, i) => s + Number(a[i]) - Number(b[i]), 0) / idx.length : 0,
  );
}

/**
 * Throws unless every text is of the written dev split (its stored split and the one its subject hashes to): the
 * test split was read once (2026-12-02) and must never be scored again.
 */
export function assertDevSplit(texts: readonly ContrastText[]): void {
  const bad = texts.find((t) => t.split !== "dev" || contrastSplit(t.targetCode, t.subject) !== "dev");
  if (bad)
    throw new Error(
      `written text ${bad.id} is not of the dev split: the written test split is never scored again`,
    );
}

/** The written texts' figures: non-contrarian texts given a narrative, contrarian ones given one, right first code. */
export interface Written {
  mainstream: Interval;
  byKind: Record<string, Interval>;
  contrarian: Interval;
  rightFirst: Interval;
  rows: { mainstream: number; contrarian: number };
  /** Per text of each figure (none = not contrarian, by kind, contrarian, rightFirst): given one / right first. */
  flags: Record<string, boolean[]>;
}

export function writtenFigures(preds: readonly Prediction[], texts: readonly ContrastText[]): Written {
  const named = preds.map((p) => !p.codes.includes(NO_NARRATIVE));
  const idx = (keep: (t: ContrastText) => boolean) => texts.flatMap((t, i) => (keep(t) ? [i] : []));
  const none = idx((t) => t.kind !== "contrarian");
  const contrarian = idx((t) => t.kind === "contrarian");
  const flags: Record<string, boolean[]> = {
    none: none.map((i) => named[i]),
    contrarian: contrarian.map((i) => named[i]),
    rightFirst: contrarian.map((i) => texts[i].codes.includes(preds[i].first)),
  };
  const byKind: Record<string, Interval> = {};
  for (const kind of ["mainstream", "rebuttal", "mainstream-words"]) {
    flags[kind] = idx((t) => t.kind === kind).map((i) => named[i]);
    byKind[kind] = share(flags[kind]);
  }
  return {
    mainstream: share(flags.none),
    byKind,
    contrarian: share(flags.contrarian),
    rightFirst: share(flags.rightFirst),
    rows: { mainstream: none.length, contrarian: contrarian.length },
    flags,
  };
}

export interface Figures {
  shares: Record<string, Interval>;
  cardsMeanF1: Interval;
  cardsGroupMacroF1: number;
  fliccMacroF1: number;
  ece: number;
  maxMainstream: number;
  minContrarian: number;
  writtenDev: Written;
  /** Per dev text of each reported cell: given a narrative (for paired comparisons). */
  cellFlags: Record<string, boolean[]>;
  /** The codes named for each CARDS dev text. */
  cardsPreds: string[][];
}

export async function evaluate(
  predict: Predict,
  stanceDev: readonly StanceExample[],
  cardsDev: readonly NarrativeExample[],
  fliccTest: readonly NarrativeExample[],
  contrastDev: readonly ContrastText[],
): Promise<Figures> {
  assertDevSplit(contrastDev);
  const stancePreds = await predict(stanceDev.map((e) => e.text));
  const shares: Record<string, Interval> = {};
  const cellFlags: Record<string, boolean[]> = {};
  for (const cell of REPORTED_CELLS) {
    const rows = stanceDev.map((e, i) => [e, i] as const).filter(([e]) => stanceCell(e) === cell);
    if (rows.length === 0) continue;
    cellFlags[cell] = rows.map(([, i]) => !stancePreds[i].codes.includes(NO_NARRATIVE));
    shares[cell] = share(cellFlags[cell]);
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
    writtenDev: writtenFigures(await predict(contrastDev.map((t) => t.text)), contrastDev),
    cellFlags,
    cardsPreds,
  };
}

/** Per hand-written claim pair (bench/narratives-claims.ts): mainstream claim given a narrative, contrarian one given one. */
export async function handFlags(predict: Predict): Promise<{ mainstream: boolean[]; contrarian: boolean[] }> {
  const preds = await predict(HAND_CLAIMS.flatMap((h) => [h.mainstream, h.contrarian]));
  const named = (p: Prediction) => !p.codes.includes(NO_NARRATIVE);
  return {
    mainstream: HAND_CLAIMS.map((_, k) => named(preds[2 * k])),
    contrarian: HAND_CLAIMS.map((_, k) => named(preds[2 * k + 1])),
  };
}

/** Which judged claims (data/judged, dev split: claims as people post them) a system gives a narrative, by stance. */
export interface JudgedFlags {
  accurate: boolean[];
  contrarian: boolean[];
  /** The same for the short plain claims alone (one plain sentence of 5 to 12 words). */
  accurateShort: boolean[];
  contrarianShort: boolean[];
}

/** The judged set's dev claims, read once per bench run. */
export async function judgedDevClaims(): Promise<JudgedClaim[]> {
  return (await readJudgedClaims(ownDataFiles().claims)).filter((c) => c.split === "dev");
}

export async function judgedFlags(predict: Predict, claims: readonly JudgedClaim[]): Promise<JudgedFlags> {
  const preds = await predict(claims.map((c) => c.claim));
  const flags = (keep: (c: JudgedClaim) => boolean) =>
    claims.flatMap((c, i) => (keep(c) ? [!preds[i].codes.includes(NO_NARRATIVE)] : []));
  const short = (c: JudgedClaim) => c.style === SHORT_PLAIN;
  return {
    accurate: flags((c) => c.stance === "accurate"),
    contrarian: flags((c) => c.stance === "contrarian"),
    accurateShort: flags((c) => c.stance === "accurate" && short(c)),
    contrarianShort: flags((c) => c.stance === "contrarian" && short(c)),
  };
}

/** The named code of highest marginal probability, or 0_0. */
const firstCode = (codes: readonly string[], probabilities: Record<string, number>): string =>
  codes.reduce((a, b) => ((probabilities[b] ?? 0) > (probabilities[a] ?? 0) ? b : a));

export const classifierPredict =
  (c: NarrativeClassifier, rule: DecisionRule): Predict =>
  async (texts) =>
    (await c.classify(texts, rule)).map((p) => ({
      codes: p.codes,
      narrative: p.narrative,
      first: firstCode(p.codes, p.probabilities),
    }));

export function baselinePredict(b: Baseline, embedder?: TextEmbedder): Predict {
  return async (texts) => {
    const emb = embedder ? await embedder.embed(texts) : undefined;
    return texts.map((t, i) => {
      const p = b.predict(t, emb?.[i]);
      return { ...p, first: p.codes[0] };
    });
  };
}

/** The coded rows plus every mainstream stance training text as 0_0 (the other baselines' training rows). */
export function codedPlusMainstream(data: NarrativeData): NarrativeExample[] {
  return [
    ...data.train,
    ...data.stanceTrain
      .filter((e) => !e.narrative && e.source !== "cards" && e.source !== "contrast")
      .map((e) => ({ id: e.id, text: e.text, codes: [NO_NARRATIVE] })),
  ];
}

/**
 * The plain baselines trained on `rows` (one-vs-rest argmax): word + char TF-IDF, and with an embedder also
 * word + char TF-IDF + its sentence vectors. `what` names the rows in the systems' names.
 */
export async function trainBaselines(
  rows: readonly NarrativeExample[],
  what: string,
  embedder?: TextEmbedder,
): Promise<{ name: string; predict: Predict }[]> {
  log(`baselines on ${what}`);
  const out = [
    {
      name: `baseline: word + char TF-IDF, one-vs-rest argmax, ${what}`,
      predict: baselinePredict(trainBaseline(rows)),
    },
  ];
  if (embedder) {
    const texts = [...new Set(rows.map((e) => e.text))];
    const vectors = await embedder.embed(texts);
    const embMap = new Map(texts.map((t, i) => [t, vectors[i]]));
    out.push({
      name: `baseline: word + char TF-IDF + USE-lite, one-vs-rest argmax, ${what}`,
      predict: baselinePredict(trainBaseline(rows, embMap), embedder),
    });
  }
  return out;
}

/** The full section (every system), or with `encoder: false` the systems without a sentence encoder only. */
export async function narrativesBench(o: { encoder: boolean }): Promise<BenchSection> {
  const data = await loadNarrativeData();
  const cardsDev = data.dev.filter((e) => e.id.startsWith("cards:"));
  const encoder = o.encoder ? await openUseLite() : undefined;
  const embedder = encoder ? memoEmbedder(encoder) : undefined;
  const systems: { name: string; figures: Figures; predict: Predict }[] = [];
  const run = async (name: string, predict: Predict) => {
    log(`  evaluating ${name}`);
    const figures = await evaluate(predict, data.stanceDev, cardsDev, data.fliccTest, data.contrastDev);
    systems.push({ name, figures, predict });
    log(
      `    max mainstream ${fmt(figures.maxMainstream)}, min contrarian ${fmt(figures.minContrarian)}, CARDS mean F1 ${fmt(figures.cardsMeanF1.value)}, written dev ${fmt(figures.writtenDev.mainstream.value)} / ${fmt(figures.writtenDev.contrarian.value)}`,
    );
  };

  // Baselines on the same rows: the coded rows (CARDS, FLICC, written texts) alone, and with every mainstream
  // training text as 0_0 (uncoded contrarian rows have no code, so no one-vs-rest model can learn from them).
  const coded = data.train;
  const withMainstream = codedPlusMainstream(data);
  // Without the encoder (narratives-fast), the one-vs-rest baseline on 21k rows is left out too: it takes an hour.
  const baselineSets = [
    [coded, `coded rows only (${coded.length})`],
    ...(embedder
      ? [[withMainstream, `coded + mainstream rows as 0_0 (${withMainstream.length})`] as const]
      : []),
  ] as const;
  for (const [rows, what] of baselineSets)
    for (const b of await trainBaselines(rows, what, embedder)) await run(b.name, b.predict);
  const baselines = systems.slice();

  const fast = new NarrativeClassifier(await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE)));
  const full = embedder
    ? new NarrativeClassifier(await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FULL_MODEL_FILE)), embedder)
    : undefined;
  const models: [string, NarrativeClassifier][] = [
    ["--fast", fast],
    ...(full ? [["full", full] as [string, NarrativeClassifier]] : []),
  ];
  for (const rule of ["check", "classify"] as const)
    for (const [name, c] of models) await run(`ours ${name}, ${rule} rule`, classifierPredict(c, rule));
  const strongest = baselines.reduce((a, b) =>
    b.figures.cardsMeanF1.value > a.figures.cardsMeanF1.value ? b : a,
  );
  const find = (name: string) => systems.find((s) => s.name === name) as (typeof systems)[number];
  const shown = full ? "full" : "--fast";
  const oursCheck = find(`ours ${shown}, check rule`);
  const oursClassify = find(`ours ${shown}, classify rule`);

  log("hand-written claims");
  const handTexts = HAND_CLAIMS.flatMap((h) => [h.mainstream, h.contrarian]);
  const show = (p: Prediction) => `${p.codes.join(", ")} (${fmt(p.narrative)})`;
  const oursHand = await oursCheck.predict(handTexts);
  const baseHand = await strongest.predict(handTexts);
  const oursFlags = await handFlags(oursCheck.predict);
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
  const mainstreamFlagged = oursFlags.mainstream.filter(Boolean).length;
  const contrarianFound = oursFlags.contrarian.filter(Boolean).length;
  const contrarianGroup = HAND_CLAIMS.filter((h, k) =>
    oursHand[2 * k + 1].codes.some((c) => c !== NO_NARRATIVE && groupOf(c) === groupOf(h.expected)),
  ).length;

  // The written test split was read once (commit b89e788's BENCHMARKS, issue 23) and is never scored again:
  // the targets below are shown on the written dev split.
  await encoder?.close();

  const cellHeader = REPORTED_CELLS.filter((c) => oursCheck.figures.shares[c]);
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
  const writtenTable = (figures: readonly Written[]) =>
    table(
      [
        "system",
        `not contrarian, given a narrative (${figures[0].rows.mainstream})`,
        "mainstream",
        "rebuttal",
        "mainstream-words",
        `contrarian, given one (${figures[0].rows.contrarian})`,
        "contrarian, right code first",
      ],
      systems.map((s, k) => [
        s.name,
        withInterval(figures[k].mainstream),
        fmt(figures[k].byKind.mainstream.value),
        fmt(figures[k].byKind.rebuttal.value),
        fmt(figures[k].byKind["mainstream-words"].value),
        withInterval(figures[k].contrarian),
        withInterval(figures[k].rightFirst),
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
  const gain = oursClassify.figures.cardsMeanF1.value - strongest.figures.cardsMeanF1.value;
  const devOurs = oursCheck.figures.writtenDev;
  const met = (ok: boolean) => (ok ? "met" : "**not met**");
  const markdown = `Training rows: ${data.train.length} coded (CARDS validation + FLICC train/val, hash split, and the written
contrast texts' train split) and ${data.stanceTrain.length} stance rows (those plus the training parts of ClimateStance,
ClimateBERT, environmental-claims, Climate-FEVER claims and evidence, arXiv titles and first sentences, GWSD; whether the
shipped gate uses GWSD is cross-validated by the trainer, models/narratives/CARD.md). Dev, never used for fitting or
tuning: ClimateStance val, ClimateBERT test, environmental-claims dev + test, the Climate-FEVER claims of the verifier's
dev split and their evidence, 20% of the arXiv papers, GWSD's held-out test sentences, CARDS dev (${cardsDev.length}),
FLICC test (${data.fliccTest.length}) and the written texts' dev split (${data.contrastDev.length}); the written test
split was read once (2026-12-02) and is not read here. The shipped models are those in models/narratives
(\`climatecheck-train narratives\`), each under both decision rules: \`check\` (P(narrative) >= ${NARRATIVE_THRESHOLD}; the
product's \`check\`, API and page) and \`classify\` (the model's lower threshold, chosen out of fold for CARDS mean F1:
${models.map(([n, c]) => `${n} ${c.json.thresholds.classifyNarrative ?? NARRATIVE_THRESHOLD}`).join(", ")}; the shared task's output, \`classify\` and batch task 2). The baselines are
trained in this run on the coded rows alone${embedder ? " and with every mainstream training text as 0_0" : ""}.${embedder ? "" : " This section leaves out every system that needs the sentence encoder (the full model, the USE-lite baselines) and the one-vs-rest baseline on the coded + mainstream rows (an hour on 2 shared cores); section narratives has them."} Intervals: bootstrap
95%, 1,000 resamples of the texts. Load average at the end: ${loadAverage()}.

### Targets (issue 23)

| target | figure | |
| --- | --- | --- |
| written dev (the target is on test, read once already): not-contrarian texts given a narrative <= 0.08 (ours ${shown}, check) | ${withInterval(devOurs.mainstream)} | ${met(devOurs.mainstream.value <= 0.08)} |
| written dev: contrarian texts given one >= 0.90 (ours ${shown}, check) | ${withInterval(devOurs.contrarian)} | ${met(devOurs.contrarian.value >= 0.9)} |
| written dev: right sub-code first >= 0.60 (ours ${shown}, check) | ${withInterval(devOurs.rightFirst)} | ${met(devOurs.rightFirst.value >= 0.6)} |
| every mainstream dev source given a narrative <= 0.10 (ours ${shown}, check; worst) | ${fmt(oursCheck.figures.maxMainstream)} | ${met(oursCheck.figures.maxMainstream <= 0.1)} |
| FLICC test and Against tweets given one >= 0.85 (ours ${shown}, check; lowest) | ${fmt(oursCheck.figures.minContrarian)} | ${met(oursCheck.figures.minContrarian >= 0.85)} |
| CARDS dev mean F1 >= strongest baseline + 0.03 (ours ${shown}, classify) | ${fmt(oursClassify.figures.cardsMeanF1.value)} vs ${fmt(strongest.figures.cardsMeanF1.value)} (${gain >= 0 ? "+" : ""}${fmt(gain)}) | ${met(gain >= 0.03)} |
| hand-written claims: mainstream given a narrative 0 of 10, contrarian found 10 of 10 (ours ${shown}, check) | ${mainstreamFlagged} of 10, ${contrarianFound} of 10 | ${met(mainstreamFlagged === 0 && contrarianFound === 10)} |

Strongest baseline on CARDS dev: ${strongest.name}.

### Share of texts given a narrative, per dev source (column: rows)

Mainstream sources (want at most 0.10): ${MAINSTREAM_CELLS.join(", ")}; \`gwsd-agree\` are news sentences that treat
climate change as a serious concern. \`cards:none\` are contrarian-blog paragraphs that make no CARDS claim.
Contrarian (want at least 0.85 for FLICC and ClimateStance Against): ${CONTRARIAN_CELLS.join(", ")}
(\`gwsd-disagree\`: news sentences whose annotators read doubt about climate change, often reported views).

${sharesTable}

### Written contrast texts (data/narratives-contrast): dev split

Share of the non-contrarian texts (mainstream, rebuttal, mainstream-words) given a narrative (want at most 0.08), of
the contrarian ones given one (want at least 0.90), and of the contrarian ones whose first code (the named code of
highest probability; a baseline's argmax) is one of its codes (want at least 0.60).

${writtenTable(systems.map((s) => s.figures.writtenDev))}

### Written contrast texts: test split

Read once, by this section's run of 2026-12-02 (git history of BENCHMARKS.md, merge b89e788); not scored again, so
every figure here is a dev figure.

### Codes, calibration

${qualityTable}

ECE: 10 equal-width bins of max(P, 1 - P) over the pooled stance dev rows; under the check rule a narrative is named
exactly when P(narrative) >= ${NARRATIVE_THRESHOLD}, so the label never contradicts the probability shown.

### Hand-written claims (bench/narratives-claims.ts; ours ${shown}, check rule, vs ${strongest.name})

Codes, with P(narrative) in brackets. Mainstream claims given a narrative by ours: ${mainstreamFlagged} of ${HAND_CLAIMS.length};
contrarian claims given one: ${contrarianFound} of ${HAND_CLAIMS.length}, in the expected group: ${contrarianGroup}.

${table(["topic", "mainstream claim", "ours", "baseline", "contrarian claim", "expected", "ours", "baseline"], handRows)}
`;
  return full
    ? {
        id: "narratives",
        title: "Narratives (task 2): stance-gated CARDS classifier against the strongest plain baselines",
        command: "npm run bench -- narratives",
        markdown,
      }
    : {
        id: "narratives-fast",
        title: "Narratives (task 2), without the sentence encoder: --fast against the plain TF-IDF baseline",
        command: "npm run bench -- narratives-fast",
        markdown,
      };
}

export const bench: Bench = () => narrativesBench({ encoder: true });
