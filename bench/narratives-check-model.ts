/**
 * Section narratives-check-model (issue 23): the shipped narratives models beside the plain baselines trained in
 * the same run on the same coded rows, every figure on dev sets with a bootstrap 95% interval, and the gain of the
 * model `check` uses (fast.json, check rule) over each baseline, paired. Dev only: the written texts' test split was
 * read once (2026-12-02) and is never scored again; this module never calls its loader (loadContrastTest) and
 * `evaluate` refuses any written text that is not of the dev split (assertDevSplit).
 */
import { join } from "node:path";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { type Interval, itemInterval } from "../src/evaluation/bootstrap.ts";
import { meanF1OverPresent } from "../src/evaluation/metrics.ts";
import { memoEmbedder } from "../src/narratives/build.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { loadNarrativeData, MAINSTREAM_SOURCES } from "../src/narratives/data.ts";
import { NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
import { stanceCell } from "../src/narratives/train.ts";
import {
  classifierPredict,
  codedPlusMainstream,
  evaluate,
  type Figures,
  handFlags,
  type JudgedFlags,
  judgedDevClaims,
  judgedFlags,
  type Predict,
  share,
  shareGain,
  trainBaselines,
  withInterval,
} from "./narratives.ts";
import { type Bench, loadAverage, signedInterval, table } from "./report.ts";

const log = (m: string) => process.stderr.write(`${m}\n`);
const fmt = (x: number) => x.toFixed(3);

interface System {
  name: string;
  figures: Figures;
  hand: { mainstream: boolean[]; contrarian: boolean[] };
  judged: JudgedFlags;
}

/** A share figure: per text of its set, whether it counts (given a narrative, right code first). */
interface Measure {
  label: string;
  /** low: a share that should be small (mainstream text given a narrative); high: one that should be large. */
  want: "low" | "high";
  flags: (s: System) => boolean[];
}

const written = (key: string) => (s: System) => s.figures.writtenDev.flags[key];
const cell = (key: string) => (s: System) => s.figures.cellFlags[key] ?? [];

const WRITTEN: readonly Measure[] = [
  { label: "not contrarian, given a narrative", want: "low", flags: written("none") },
  { label: "of those: mainstream", want: "low", flags: written("mainstream") },
  { label: "rebuttal", want: "low", flags: written("rebuttal") },
  { label: "mainstream-words", want: "low", flags: written("mainstream-words") },
  { label: "contrarian, given one", want: "high", flags: written("contrarian") },
  { label: "contrarian, right code first", want: "high", flags: written("rightFirst") },
];
/** Dev sources in the order of issue 23's table: mainstream ones (want at most 0.10), then FLICC test and Against. */
const SOURCES: readonly (Measure & { cell: string })[] = [
  ["stance-favor", "Favor tweets", "low"],
  ["cf-supports", "Climate-FEVER SUPPORTS", "low"],
  ["gwsd-agree", "GWSD agree", "low"],
  ["climatebert", "ClimateBERT", "low"],
  ["env-claims", "env-claims", "low"],
  ["cf-evidence", "cf-evidence", "low"],
  ["arxiv", "arxiv", "low"],
  ["flicc", "FLICC test", "high"],
  ["stance-against", "Against tweets", "high"],
].map(([c, label, want]) => ({ cell: c, label, want: want as "low" | "high", flags: cell(c) }));
/** The mainstream sources of the target "every mainstream dev source <= 0.10" (GWSD agree is reported, not targeted). */
const TARGET_MAINSTREAM: readonly string[] = MAINSTREAM_SOURCES;
const HAND: readonly Measure[] = [
  { label: "hand-written mainstream claims given a narrative", want: "low", flags: (s) => s.hand.mainstream },
  { label: "hand-written contrarian claims given one", want: "high", flags: (s) => s.hand.contrarian },
];
/** Claims as people post them (data/judged, dev split), by the writer's stance; short plain ones apart. */
const JUDGED: readonly Measure[] = [
  { label: "judged dev: accurate claims given a narrative", want: "low", flags: (s) => s.judged.accurate },
  {
    label: "judged dev: accurate short plain claims given one",
    want: "low",
    flags: (s) => s.judged.accurateShort,
  },
  { label: "judged dev: contrarian claims given one", want: "high", flags: (s) => s.judged.contrarian },
  {
    label: "judged dev: contrarian short plain claims given one",
    want: "high",
    flags: (s) => s.judged.contrarianShort,
  },
];

/** Met or not at the point figure, and whether the whole 95% interval is on the same side of the target. */
export function verdict(i: Interval, target: number, want: "low" | "high"): string {
  const ok = (x: number) => (want === "low" ? x <= target : x >= target);
  if (ok(i.value))
    return ok(i.low) && ok(i.high) ? "met (whole interval)" : "met at the point; the interval crosses it";
  return !ok(i.low) && !ok(i.high)
    ? "**not met** (whole interval)"
    : "**not met** at the point; the interval reaches it";
}

export const bench: Bench = async () => {
  const started = Date.now();
  // Dev sets only; loadNarrativeData reads the written test split's texts solely to keep them out of training.
  const data = await loadNarrativeData();
  const cardsDev = data.dev.filter((e) => e.id.startsWith("cards:"));
  const cardsGold = cardsDev.map((e) => e.codes);
  const judgedClaims = await judgedDevClaims();
  const encoder = await openUseLite();
  const embedder = memoEmbedder(encoder);
  const withMainstream = codedPlusMainstream(data);
  const systems: System[] = [];
  const add = async (name: string, predict: Predict) => {
    log(`  evaluating ${name}`);
    const figures = await evaluate(predict, data.stanceDev, cardsDev, data.fliccTest, data.contrastDev);
    systems.push({
      name,
      figures,
      hand: await handFlags(predict),
      judged: await judgedFlags(predict, judgedClaims),
    });
  };
  const fastJson = await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE));
  const fullJson = await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FULL_MODEL_FILE));
  try {
    for (const [rows, what] of [
      [data.train, `coded rows (${data.train.length})`],
      [withMainstream, `coded + mainstream rows as 0_0 (${withMainstream.length})`],
    ] as const)
      for (const b of await trainBaselines(rows, what, embedder)) await add(b.name, b.predict);
    const fast = new NarrativeClassifier(fastJson, fastJson.encoder ? embedder : undefined);
    const full = new NarrativeClassifier(fullJson, fullJson.encoder ? embedder : undefined);
    await add("fast.json, check rule (check, API, page)", classifierPredict(fast, "check"));
    await add("fast.json, classify rule (classify --fast)", classifierPredict(fast, "classify"));
    await add("full.json, classify rule (classify, predict)", classifierPredict(full, "classify"));
  } finally {
    await encoder.close();
  }
  const baselines = systems.slice(0, 4);
  const [oursCheck, fastClassify, fullClassify] = systems.slice(4);
  const strongest = baselines.reduce((a, b) =>
    b.figures.cardsMeanF1.value > a.figures.cardsMeanF1.value ? b : a,
  );
  const cardsGain = (a: System, b: System) =>
    itemInterval(
      cardsDev.length,
      (idx) =>
        meanF1OverPresent(a.figures.cardsPreds, cardsGold, idx) -
        meanF1OverPresent(b.figures.cardsPreds, cardsGold, idx),
    );

  const figureTable = (measures: readonly Measure[], extra?: [string, (s: System) => string]) =>
    table(
      [
        "system",
        ...measures.map((m) => `${m.label} (${m.flags(oursCheck).length})`),
        ...(extra ? [extra[0]] : []),
      ],
      systems.map((s) => [
        s.name,
        ...measures.map((m) => withInterval(share(m.flags(s)))),
        ...(extra ? [extra[1](s)] : []),
      ]),
    );

  // Gains of the check model over each baseline, paired (the same resamples of the same texts for both systems).
  const better = (g: Interval, want: "low" | "high") => {
    const sign = want === "low" ? -1 : 1;
    const [lo, hi] = [sign * g.low, sign * g.high].sort((a, b) => a - b);
    return lo > 0 ? "ours better" : hi < 0 ? "baseline better" : "no clear difference";
  };
  interface Gain {
    label: string;
    want: "low" | "high";
    /** a's figure minus b's, paired. */
    of: (a: System, b: System) => Interval;
  }
  const gains: Gain[] = [
    ...[...WRITTEN.map((m) => ({ ...m, label: `written: ${m.label}` })), ...SOURCES, ...HAND, ...JUDGED].map(
      (m) => ({
        label: m.label,
        want: m.want,
        of: (a: System, b: System) => shareGain(m.flags(a), m.flags(b)),
      }),
    ),
    { label: "CARDS dev mean F1", want: "high", of: cardsGain },
  ];
  const gainRow = (label: string, want: "low" | "high", gain: (b: System) => Interval) => [
    `${label} (want ${want})`,
    ...baselines.flatMap((b) => {
      const g = gain(b);
      return [signedInterval(g), better(g, want)];
    }),
  ];
  const gainTable = table(
    [
      "figure (dev)",
      ...baselines.flatMap((b) => [
        `fast.json check minus ${b.name.replace(/^baseline: /, "").replace(/, one-vs-rest argmax/, "")}${b === strongest ? " (strongest)" : ""}`,
        "difference",
      ]),
    ],
    [
      ...gains.map((g) => gainRow(g.label, g.want, (b) => g.of(oursCheck, b))),
      gainRow("CARDS dev mean F1, fast.json classify rule", "high", (b) => cardsGain(fastClassify, b)),
      gainRow("CARDS dev mean F1, full.json classify rule", "high", (b) => cardsGain(fullClassify, b)),
    ],
  );
  const sides = (side: string) => {
    const labels = gains
      .filter((g) => better(g.of(oursCheck, strongest), g.want) === side)
      .map((g) => g.label);
    return labels.length ? `"${labels.join('", "')}"` : "no figure";
  };
  const summary = `Against the strongest baseline the check model is better (the whole paired interval on one side of 0)
on ${sides("ours better")}; the baseline is better on ${sides("baseline better")}; no clear difference on the rest.
The baselines trained with the mainstream texts as 0_0 name a narrative on few texts of any kind: they give fewer
mainstream texts one than the check model and find far fewer contrarian ones (gain table).`;

  const w = oursCheck.figures.writtenDev;
  const mainstreamShares = TARGET_MAINSTREAM.map((c) => ({ c, i: oursCheck.figures.shares[c] }));
  const worst = mainstreamShares.reduce((a, b) => (b.i.value > a.i.value ? b : a));
  const metSources = mainstreamShares.filter((m) => m.i.value <= 0.1).length;
  const handMainstream = share(oursCheck.hand.mainstream);
  const handContrarian = share(oursCheck.hand.contrarian);
  const count = (flags: boolean[]) => flags.filter(Boolean).length;
  const gainTarget = (s: System, label: string) => {
    const g = cardsGain(s, strongest);
    return [
      `CARDS dev mean F1 >= strongest baseline + 0.03 (${label})`,
      `${fmt(s.figures.cardsMeanF1.value)} vs ${fmt(strongest.figures.cardsMeanF1.value)}: ${signedInterval(g)}`,
      verdict(g, 0.03, "high"),
    ];
  };
  const targets = table(
    ["target (issue 23), on dev: not the written test split", "figure (95% interval)", "verdict"],
    [
      [
        "written dev: not-contrarian texts given a narrative <= 0.08",
        withInterval(w.mainstream),
        verdict(w.mainstream, 0.08, "low"),
      ],
      [
        "written dev: contrarian texts given one >= 0.90",
        withInterval(w.contrarian),
        verdict(w.contrarian, 0.9, "high"),
      ],
      [
        "written dev: right sub-code first >= 0.60",
        withInterval(w.rightFirst),
        verdict(w.rightFirst, 0.6, "high"),
      ],
      [
        `every mainstream dev source given a narrative <= 0.10 (${metSources} of ${TARGET_MAINSTREAM.length} met; worst: ${worst.c})`,
        withInterval(worst.i),
        verdict(worst.i, 0.1, "low"),
      ],
      ...(["flicc", "stance-against"] as const).map((c) => [
        `${c === "flicc" ? "FLICC test" : "Against tweets"} given one >= 0.85`,
        withInterval(oursCheck.figures.shares[c]),
        verdict(oursCheck.figures.shares[c], 0.85, "high"),
      ]),
      gainTarget(fastClassify, "fast.json, classify rule: classify --fast"),
      gainTarget(fullClassify, "full.json, classify rule: classify"),
      [
        "hand-written mainstream claims given a narrative: 0 of 10",
        `${count(oursCheck.hand.mainstream)} of 10, share ${withInterval(handMainstream)}`,
        verdict(handMainstream, 0, "low"),
      ],
      [
        "hand-written contrarian claims given one: 10 of 10",
        `${count(oursCheck.hand.contrarian)} of 10, share ${withInterval(handContrarian)}`,
        verdict(handContrarian, 1, "high"),
      ],
    ],
  );
  const rowsOf = (c: string) => data.stanceDev.filter((e) => stanceCell(e) === c).length;
  const minutes = ((Date.now() - started) / 60000).toFixed(1);

  const markdown = `Every figure is on dev sets, never used for fitting or tuning: the written contrast texts' dev split
(${data.contrastDev.length}), the held-out part of every stance source (${SOURCES.map((m) => `${m.label} ${rowsOf(m.cell)}`).join(", ")}),
CARDS dev (${cardsDev.length}), the 20 hand-written claims of bench/narratives-claims.ts and the judged set's dev claims
(data/judged: claims as people post them, ${oursCheck.judged.accurate.length} accurate and ${oursCheck.judged.contrarian.length} contrarian). The written test split was
read once (2026-12-02) and is not read here: this bench never calls its loader, and its evaluation refuses any written
text not of the dev split (assertDevSplit, test/narratives-bench-dev.test.ts). One run evaluates the shipped
models/narratives/fast.json under the check rule (P(narrative) >= ${NARRATIVE_THRESHOLD}; \`check\`, the API and the page) and
the classify rule (threshold ${fastJson.thresholds.classifyNarrative ?? NARRATIVE_THRESHOLD}; \`classify --fast\`), and full.json under the classify rule
(\`classify\`, \`predict\`; its classify threshold is ${fullJson.thresholds.classifyNarrative ?? NARRATIVE_THRESHOLD}, codes named by ${fullJson.thresholds.classifyCodes ?? fullJson.fallback}), beside
the baselines trained in this run on the same rows: word + char TF-IDF one-vs-rest argmax, alone and with the USE-lite
sentence vector (bench/narratives.ts trainBaselines, the code section narratives uses), each on the ${data.train.length} coded
rows (CARDS validation + FLICC train/val, hash split, and the written texts' train split) and on those plus every
mainstream training text as 0_0 (${withMainstream.length} rows; uncoded contrarian texts cannot train a one-vs-rest
code model). No model is retrained. Intervals: bootstrap 95%, 1,000 resamples of the texts (of the 10 claims for the
hand-written ones); a gain is paired, both systems scored on the same resamples. Strongest baseline, by CARDS dev mean
F1 as in section narratives: ${strongest.name}.

### Targets (issue 23), on dev, for the model \`check\` uses (fast.json, check rule) unless named

${targets}

A verdict is on the point figure; "whole interval" says the 95% interval lies on the same side of the target.
${summary}

### Written contrast texts, dev split: share given a narrative, and right code first

${figureTable(WRITTEN)}

### Share of texts given a narrative, per dev source (column: rows)

Mainstream sources want at most 0.10 (GWSD agree: news sentences that treat climate change as a serious concern);
FLICC test and Against tweets want at least 0.85.

${figureTable(SOURCES, ["CARDS dev mean F1 over codes present", (s) => withInterval(s.figures.cardsMeanF1)])}

### Hand-written claims (10 mainstream, 10 contrarian; bench/narratives-claims.ts)

${figureTable(HAND)}

### Claims as people post them (data/judged, dev split; the writer's stance; short plain: one plain sentence of 5 to 12 words)

${figureTable(JUDGED)}

### Gain of the check model (fast.json, check rule) over each baseline, paired 95% intervals

For a share that should be low a negative gain is better. "ours better" / "baseline better": the whole interval is on
that side of 0; otherwise "no clear difference". The CARDS rows under the classify rules compare the models
\`classify --fast\` and \`classify\` use.

${gainTable}

Run time ${minutes} min (USE-lite vectors cached under $CLIMATECHECK_HOME); load average at the end: ${loadAverage()}.
`;
  return {
    id: "narratives-check-model",
    title: "Narratives: the model check uses against the strongest baselines, dev only (issue 23)",
    command: "npm run bench -- narratives-check-model",
    markdown,
  };
};
