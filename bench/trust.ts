/**
 * Verdicts a fact-checker can trust (issue 13), on our dev splits and on 20 hand-written claims against the default
 * index: labels against the probabilities shown, dev weighted F1 of the shipped verifier beside the one it replaces
 * (builtin:v3, its recorded dev labels), itself without the direction check, and the TF-IDF + LR baseline, with
 * paired-bootstrap intervals; the contrast set, the relevance gate, the out-of-scope detector, and speed.
 */

import { readFileSync } from "node:fs";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { bootstrapInterval, groupResamples } from "../src/evaluation/bootstrap.ts";
import { verificationF1 } from "../src/evaluation/metrics.ts";
import { foldOf } from "../src/learning/split.ts";
import { openPipeline } from "../src/pipeline/pipeline.ts";
import type { CheckResult } from "../src/pipeline/result.ts";
import { loadScopeData } from "../src/scope/build.ts";
import { englishLanguage, loadScopeDetector, scopeOf, weatherSmallTalk } from "../src/scope/scope.ts";
import { type Label, NEI } from "../src/types.ts";
import { trainBaseline } from "../src/verification/baseline.ts";
import { relevancePairs } from "../src/verification/build-relevance.ts";
import { loadVerificationModel, openBuiltinVerifier } from "../src/verification/builtin.ts";
import { contrastClaim } from "../src/verification/contrast.ts";
import type { Source, SourcedExample } from "../src/verification/examples.ts";
import { DEFAULT_PAIR_GROUPS, type PairGroup } from "../src/verification/features.ts";
import { fitClaimNarrative } from "../src/verification/fit-claim-narrative.ts";
import { VerificationModel } from "../src/verification/model.ts";
import { loadRelevanceGate, RELEVANCE_GATE } from "../src/verification/relevance.ts";
import {
  evaluateModel,
  loadVerificationData,
  neiAsSupportsShare,
  trainVerificationModel,
} from "../src/verification/train.ts";
import { agreesWithProbs, type Verdict } from "../src/verification/verifier.ts";
import { type Bench, loadAverage, percentile, signed, table } from "./report.ts";

const SOURCES: Source[] = ["scifact", "climate-fever"];
const V3_LABELS = new URL("fixtures/verification-v3-dev-labels.json", import.meta.url);
/** Hand-written opposites of dev claims, by claim id: a contrast set not built by the guard's rule. */
const HAND_CONTRAST = new URL("fixtures/contrast-hand.json", import.meta.url);
/** Hand-written English claims off and on the subject, never used for training or a choice. */
const SCOPE_HAND = new URL("fixtures/scope-hand.json", import.meta.url);
const f3 = (x: number) => x.toFixed(3);
const log = (m: string) => process.stderr.write(`  ${new Date().toISOString().slice(11, 19)} ${m}\n`);
const noEncoder = async (): Promise<Float32Array[]> => {
  throw new Error("the shipped verification model needs no sentence encoder");
};

/** The issue's examples and other everyday claims; the last two are not about climate. */
export const HAND_CLAIMS = [
  "Arctic sea ice has been growing since 2012",
  "Sea level is rising",
  "Global warming is a hoax",
  "The 97% consensus figure is fake",
  "Sea level rise is not accelerating",
  "CO2 is plant food, so more CO2 is good for the planet",
  "Global temperatures have risen by about 1.1 degrees since pre-industrial times",
  "Climate models have overestimated global warming",
  "Glaciers are retreating worldwide",
  "The Sun is driving recent global warming",
  "Heat waves are becoming more frequent",
  "Antarctica is gaining ice",
  "Ocean acidification is caused by the absorption of CO2",
  "Wind turbines kill more birds than they save",
  "Renewable energy is too expensive to replace fossil fuels",
  "Methane is a more potent greenhouse gas than carbon dioxide",
  "Thawing permafrost releases carbon into the atmosphere",
  "Hurricanes are getting stronger because of climate change",
  "The weather today is sunny",
  "Vaccines cause autism",
];

/** Hand-written claims in other languages (the language rule's check; our data have none). */
const FOREIGN = [
  "El nivel del mar está subiendo más rápido que nunca",
  "El calentamiento global es una mentira de los científicos",
  "Le niveau de la mer monte plus vite que prévu",
  "Le réchauffement climatique est une invention des médias",
  "Der Meeresspiegel steigt und das ist nicht natürlich",
  "Die globale Erwärmung ist eine Erfindung der Wissenschaftler",
  "O aquecimento global não é causado pelo homem",
  "Il riscaldamento globale è una bufala",
  "De zeespiegel stijgt sneller dan verwacht",
  "全球变暖是一个骗局",
  "北极海冰自2012年以来一直在增加",
  "Глобальное потепление — это обман",
  "الاحتباس الحراري خدعة",
  "地球温暖化は嘘だ",
];

/** Hand-written English claims not about climate (beside the dev set's SciFact claims). */
const OFF_TOPIC = [
  "The weather today is sunny",
  "Vaccines cause autism",
  "The new phone has a faster processor than the old one",
  "Coffee improves memory in older adults",
  "The stock market will crash next year",
  "Football is the most popular sport in the world",
  "Eating carrots improves night vision",
  "The Great Wall of China is visible from space",
];

interface ContrastCount {
  predictedSupports: number;
  contrastNotSupports: number;
}

interface System {
  name: string;
  verdicts: Map<Source, Verdict[]>;
  contrast: Map<Source, ContrastCount>;
  /** The hand-written contrast set (HAND_CONTRAST). */
  hand: Map<Source, ContrastCount>;
}

const NARRATIVE_SYSTEMS = [
  ["not shipped: + claim P(narrative)", ["narrative"]],
  ["not shipped: + P(narrative) and its products with every feature", ["narrative", "narrative-x"]],
] as const;

export const bench: Bench = async () => {
  const { train, dev } = await loadVerificationData();
  const devBy = new Map(SOURCES.map((s) => [s, dev.filter((e) => e.source === s)]));
  const model = await loadVerificationModel();
  const previous = new VerificationModel({ ...model.json, contrastGuard: false });
  log("baseline");
  const baseline = trainBaseline(train);
  // Narrative-aware verification (issue 13 item 4): the claim's P(narrative) from gates that never saw the claim
  // (claim-narrative.ts), refitted into the same training; out-of-fold weighted F1 on train chooses, dev reports.
  log("narrative gate and verifier training with the claim's P(narrative)");
  const narrative = await fitClaimNarrative(train, dev, 5, (id) => foldOf(id, 5), { log });
  const trained = await trainVerificationModel(train, {
    claimNarrative: narrative.outOfFold,
    narrativeGate: narrative.json,
  });
  const narrativeOof: (string | number)[][] = [];
  const oofSum: number[] = [];
  const narrativeModels = [
    ["same training, shipped groups", [...DEFAULT_PAIR_GROUPS]] as const,
    ...NARRATIVE_SYSTEMS,
  ].map(([name, extra]) => {
    const groups: PairGroup[] = [...new Set([...DEFAULT_PAIR_GROUPS, ...extra])];
    const r = trained.refit(groups);
    narrativeOof.push([
      name,
      groups.join(", "),
      f3(r.calibration.oofF1.single),
      f3(r.calibration.oofF1.multi),
    ]);
    oofSum.push(r.calibration.oofF1.single + r.calibration.oofF1.multi);
    return [name, new VerificationModel(r.model)] as const;
  });
  const handContrast = new Map(
    Object.entries(
      (JSON.parse(readFileSync(HAND_CONTRAST, "utf8")) as { opposites: Record<string, string> }).opposites,
    ),
  );
  const devClaimIds = new Set(dev.map((e) => e.claimId));
  const unknown = [...handContrast.keys()].filter((id) => !devClaimIds.has(id));
  if (unknown.length > 0)
    throw new Error(`${HAND_CONTRAST.pathname}: not dev claim ids: ${unknown.join(", ")}`);

  // Dev pairs predicted Supports, against an opposite of their claim: the rule's contrast, or (the hand-written
  // set) the claim's hand-written opposite.
  const contrastOf = async (
    opposite: (e: SourcedExample) => string | undefined,
    predict: (ex: SourcedExample[]) => Promise<Verdict[]>,
    ex: SourcedExample[],
    verdicts: Verdict[],
  ) => {
    const picked = ex.flatMap((e, i) => {
      const c = verdicts[i].label === "Supports" ? opposite(e) : undefined;
      return c === undefined ? [] : [{ ...e, claim: c }];
    });
    const out = await predict(picked);
    return {
      predictedSupports: picked.length,
      contrastNotSupports: out.filter((v) => v.label !== "Supports").length,
    };
  };
  const systems: System[] = [];
  const run = async (name: string, predict: (ex: SourcedExample[]) => Promise<Verdict[]>) => {
    const s: System = { name, verdicts: new Map(), contrast: new Map(), hand: new Map() };
    for (const source of SOURCES) {
      const ex = devBy.get(source) as SourcedExample[];
      const v = await predict(ex);
      s.verdicts.set(source, v);
      s.contrast.set(source, await contrastOf((e) => contrastClaim(e.claim), predict, ex, v));
      s.hand.set(source, await contrastOf((e) => handContrast.get(e.claimId), predict, ex, v));
    }
    systems.push(s);
  };
  log("verifiers on dev");
  await run("TF-IDF + LR baseline", async (ex) => baseline.predict(ex));
  await run(
    "shipped without the direction check",
    async (ex) => (await evaluateModel(previous, ex, noEncoder)).verdicts,
  );
  await run(
    "shipped built-in (builtin:v4)",
    async (ex) => (await evaluateModel(model, ex, noEncoder)).verdicts,
  );
  for (const [name, m] of narrativeModels.slice(1))
    await run(name, async (ex) => (await evaluateModel(m, ex, noEncoder)).verdicts);
  const [base, noGuard, shipped] = systems;
  const narrativeRuns = systems.slice(3);

  // The verifier before this change (builtin:v3, commit ad03d3a): its dev labels, recorded by running that commit
  // (bench/fixtures/verification-v3-dev-labels.json says how), since its features differ from today's code.
  const v3 = JSON.parse(readFileSync(V3_LABELS, "utf8")) as {
    labelNotTopClass: Record<Source, number>;
    labels: Record<string, Label>;
  };
  const v3Labels = new Map(
    SOURCES.map((source) => [
      source,
      (devBy.get(source) as SourcedExample[]).map((e) => v3.labels[`${e.claimId}\t${e.abstractId}`]),
    ]),
  );

  // Weighted F1 with paired-bootstrap intervals over dev claims of the shipped model's differences.
  const verificationRows: (string | number)[][] = [];
  const diffRows: (string | number)[][] = [];
  for (const source of SOURCES) {
    const ex = devBy.get(source) as SourcedExample[];
    const gold = ex.map((e) => e.label);
    const samples = groupResamples(ex.map((e) => e.claimId));
    const v3Pred = v3Labels.get(source) as Label[];
    const v3F = verificationF1(v3Pred, gold);
    verificationRows.push([
      "before: builtin:v3 (ad03d3a)",
      source,
      f3(v3F.weighted),
      f3(v3F.supports),
      f3(v3F.refutes),
      f3(neiAsSupportsShare(gold, v3Pred)),
      "-",
      v3.labelNotTopClass[source],
    ]);
    for (const s of systems) {
      const pred = (s.verdicts.get(source) as Verdict[]).map((v) => v.label);
      const f = verificationF1(pred, gold);
      const c = s.contrast.get(source) as ContrastCount;
      verificationRows.push([
        s.name,
        source,
        f3(f.weighted),
        f3(f.supports),
        f3(f.refutes),
        f3(neiAsSupportsShare(gold, pred)),
        `${c.contrastNotSupports} / ${c.predictedSupports} = ${f3(c.contrastNotSupports / Math.max(1, c.predictedSupports))}`,
        (s.verdicts.get(source) as Verdict[]).filter((v) => !agreesWithProbs(v)).length,
      ]);
    }
    const labels = (s: System) => (s.verdicts.get(source) as Verdict[]).map((v) => v.label);
    const refs: [string, Label[]][] = [
      ["builtin:v3", v3Pred],
      ["shipped without the direction check", labels(noGuard)],
      ["TF-IDF + LR baseline", labels(base)],
    ];
    const pairsOf: [string, Label[], Label[]][] = [
      ...refs.map(([refName, b]): [string, Label[], Label[]] => [`shipped − ${refName}`, labels(shipped), b]),
      ...narrativeRuns.flatMap((n): [string, Label[], Label[]][] => [
        [`${n.name} − shipped`, labels(n), labels(shipped)],
        [`${n.name} − builtin:v3`, labels(n), v3Pred],
      ]),
    ];
    for (const [diffName, a, b] of pairsOf) {
      const diff = (rows: readonly number[]) => {
        const g = rows.map((r) => gold[r]);
        return (
          verificationF1(
            rows.map((r) => a[r]),
            g,
          ).weighted -
          verificationF1(
            rows.map((r) => b[r]),
            g,
          ).weighted
        );
      };
      const all = gold.map((_, i) => i);
      const [lo, hi] = bootstrapInterval(samples, diff);
      diffRows.push([source, diffName, signed(diff(all)), `${signed(lo)} to ${signed(hi)}`]);
    }
  }

  // Relevance gate on the dev pairs it is defined on.
  log("relevance gate");
  const detectorForGate = await loadScopeDetector();
  const gateUse = await openUseLite();
  const gate = await loadRelevanceGate(
    (t) => detectorForGate.pClimate(t),
    undefined,
    (texts) => gateUse.embed(texts),
  );
  const gateOf = async (p: { claim: string; sentences: readonly string[]; title?: string }) =>
    (await gate.probabilities(p.claim, [p]))[0];
  const gatePairs = relevancePairs(dev);
  const gateP: number[] = [];
  for (const p of gatePairs) gateP.push(await gateOf(p));
  const gateRows = (["all", ...SOURCES] as const).map((source) => {
    const rows = gatePairs.map((_, i) => i).filter((i) => source === "all" || gatePairs[i].source === source);
    const samples = groupResamples(rows.map((i) => gatePairs[i].claimId));
    const pr = (sub: readonly number[]) => {
      let tp = 0;
      let fp = 0;
      let fn = 0;
      for (const k of sub) {
        const i = rows[k];
        const passed = gateP[i] >= RELEVANCE_GATE;
        if (passed && gatePairs[i].about) tp++;
        else if (passed) fp++;
        else if (gatePairs[i].about) fn++;
      }
      return { precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn) };
    };
    const point = pr(rows.map((_, k) => k));
    const [pl, ph] = bootstrapInterval(samples, (s) => pr(s).precision);
    const [rl, rh] = bootstrapInterval(samples, (s) => pr(s).recall);
    return [
      source,
      rows.length,
      `${f3(point.precision)} (${f3(pl)}–${f3(ph)})`,
      `${f3(point.recall)} (${f3(rl)}–${f3(rh)})`,
    ];
  });
  const neiPassed: string[] = [];
  for (const source of SOURCES) {
    const nei = (devBy.get(source) as SourcedExample[]).filter((e) => e.label === NEI);
    let passed = 0;
    for (const e of nei) if ((await gateOf(e)) >= RELEVANCE_GATE) passed++;
    neiPassed.push(`${source} ${passed} of ${nei.length}`);
  }
  await gateUse.close();

  // Out of scope.
  log("scope");
  const detector = await loadScopeDetector();
  const scopeData = await loadScopeData();
  const scopeRows: (string | number)[][] = [];
  const bySource = new Map<string, typeof scopeData.dev>();
  for (const t of scopeData.dev) bySource.set(t.source, [...(bySource.get(t.source) ?? []), t]);
  const claimsDev = scopeData.dev.filter((t) => t.source === "climate-fever" || t.source === "scifact");
  for (const [name, rows] of [
    ["claims: Climate-FEVER + SciFact", claimsDev],
    ...[...bySource].map(([s, r]) => [s, r] as const),
    ["all dev texts", scopeData.dev],
  ] as const) {
    const right = rows.map((t) => detector.assess(t.text).in_scope === t.climate);
    const samples = groupResamples(rows.map((t) => t.id));
    const [lo, hi] = bootstrapInterval(samples, (s) => s.filter((i) => right[i]).length / s.length);
    scopeRows.push([
      name,
      rows.length,
      `${f3(right.filter(Boolean).length / rows.length)} (${f3(lo)}–${f3(hi)})`,
    ]);
  }
  const foreignFlagged = FOREIGN.filter((t) => !englishLanguage(t)).length;
  const offTopicFlagged = OFF_TOPIC.filter((t) => !detector.assess(t).in_scope).length;
  const scopeHand = JSON.parse(readFileSync(SCOPE_HAND, "utf8")) as { offTopic: string[]; inScope: string[] };
  const handOffTopic = scopeHand.offTopic.filter((t) => !detector.assess(t).in_scope).length;
  const handInScope = scopeHand.inScope.filter((t) => detector.assess(t).in_scope).length;
  const handMissed = scopeHand.offTopic.filter((t) => detector.assess(t).in_scope);
  const climateDev = scopeData.dev.filter((t) => t.climate);
  const weatherFalseAlarms = climateDev.filter((t) => weatherSmallTalk(t.text)).length;
  const englishFalseAlarms = scopeData.dev.filter((t) => !englishLanguage(t.text)).length;

  // Verification speed: dev pairs through the shipped verifier (direction check included).
  log("speed");
  const verifier = await openBuiltinVerifier({ model });
  const pairs = dev.map((e) => ({ claim: e.claim, abstract: e.sentences.join(" "), sentences: e.sentences }));
  await verifier.verifyPairs(pairs.slice(0, 50));
  const t0 = performance.now();
  await verifier.verifyPairs(pairs);
  const pairsPerSecond = pairs.length / ((performance.now() - t0) / 1000);
  await verifier.close();

  // The product on 20 hand-written claims (default index).
  log("hand-written claims through the product");
  const pipeline = await openPipeline();
  for (const c of HAND_CLAIMS.slice(0, 3)) await pipeline.check(`${c}?`, { k: 5 });
  const results: CheckResult[] = [];
  for (const c of HAND_CLAIMS) results.push(await pipeline.check(c, { k: 5 }));
  await pipeline.close();
  const totals = results.map((r) => r.timings_ms.total);
  const handRows = results.map((r) => {
    const gated = r.evidence.filter((e) => !e.about_claim);
    // What the page showed before the gate: the verifier's side on the items now gated (P(S) or P(R) top before).
    const sidesBefore = gated.filter((e) => {
      const relevance = e.relevance ?? 1;
      const s = e.p_supports / relevance;
      const rf = e.p_refutes / relevance;
      return Math.max(s, rf) > 1 - s - rf;
    }).length;
    return [
      r.claim,
      r.scope.in_scope ? "yes" : "no",
      `${r.evidence.length - gated.length} / ${r.evidence.length}`,
      sidesBefore,
      `${r.summary.lean} (S ${r.summary.supports}, R ${r.summary.refutes})`,
      r.caution.needs_human_review ? "yes" : "no",
    ];
  });
  const evidenceDisagreements = results
    .flatMap((r) => r.evidence)
    .filter(
      (e) =>
        !agreesWithProbs({
          label: e.label as Label,
          confidence: e.confidence,
          probs: { supports: e.p_supports, refutes: e.p_refutes, nei: e.p_nei },
        }),
    ).length;
  const evidenceItems = results.reduce((a, r) => a + r.evidence.length, 0);
  const handRowsContrast = systems.flatMap((s) =>
    SOURCES.map((source) => {
      const c = s.hand.get(source) as ContrastCount;
      return [
        s.name,
        source,
        `${c.contrastNotSupports} / ${c.predictedSupports} = ${f3(c.contrastNotSupports / Math.max(1, c.predictedSupports))}`,
      ];
    }),
  );
  const examples = (devBy.get("climate-fever") as SourcedExample[])
    .map((e) => [e.claim, contrastClaim(e.claim)] as const)
    .filter((p) => p[1] !== undefined)
    .filter((p, i, all) => all.findIndex((q) => q[0] === p[0]) === i)
    .slice(0, 5);

  return {
    id: "trust",
    title: "Verdicts a fact-checker can trust: labels, contrast set, relevance gate, scope (issue 13)",
    command: "npm run bench -- trust",
    markdown: `
Dev splits of the verification data (by claim id, salt "verification", never used for a choice), ${dev.length} pairs.
Paired bootstrap: 1,000 resamples of dev claims (seed 2026), 95% intervals. Load average at the end: ${loadAverage()}.

### Verifier: one story per pair, dev weighted F1, contrast set

The label of every verdict is the most probable of the probabilities shown (last column: verdicts where it is
not; \`agreesWithProbs\` in src/verification/verifier.ts). The shipped verifier folds its decision weights into
the probabilities (ln w on the temperature-scaled logits, re-calibrated out of fold, models/verification/CARD.md)
and adds a direction check (contrastGuard in src/verification/model.ts), and its lexicon has more direction words
(record lows, minimum, retreating, highs, maximum; out-of-fold weighted F1 0.601 → 0.605 for one-sentence pairs).
"Before" is the verifier this change replaces, builtin:v3 at commit ad03d3a, whose dev labels are recorded in
bench/fixtures/verification-v3-dev-labels.json (produced by running that commit; its last column counts its
verdicts whose label was not the most probable class it showed). Contrast set: every dev pair
predicted Supports whose claim the rule in src/verification/contrast.ts can contrast; the column is how many of
their contrasted claims are not predicted Supports (target: at least 70%).

${table(["system", "dev set", "weighted F1", "Supports F1", "Refutes F1", "gold NEI → Supports", "contrast: not Supports / predicted Supports", "label ≠ top class"], verificationRows)}

${table(["dev set", "difference", "weighted F1", "95% interval"], diffRows)}

Hand-written contrast set (bench/fixtures/contrast-hand.json): ${handContrast.size} dev claims, each with an
opposite written by hand in words of its own (not the rule's swaps: "Antarctica's ice sheet is stable and shows no
sign of breaking up" for a claim that it may be disintegrating), never used for a choice. Of the dev pairs of those
claims that a system predicts Supports, how many it does not predict Supports against the opposite:

${table(["system", "dev set", "hand-written opposite: not Supports / predicted Supports"], handRowsContrast)}

Contrast examples (Climate-FEVER dev): ${examples.map(([a, b]) => `"${a}" → "${b}"`).join("; ")}.

The direction check was chosen on train pairs among four rules (P(S) × (1 − contrast P(S)) always; P(S)² /
(P(S) + contrast P(S)); the same two only when the contrast's P(Supports) is at least the claim's; halving P(S)
then): the kept rule had the best train weighted F1 of those that pass the contrast set. The four were also
looked at on dev while exploring (the always-on ones cost about 0.04 weighted F1 there), so the dev figures above
are not wholly untouched by that choice.

### Narrative-aware verification (not shipped)

The claim's P(narrative) (does it carry a CARDS disinformation narrative?) as evidence about the claim, as the
ClimateCheck 2026 paper proposes: a pair group "narrative" (P(narrative) itself) and "narrative-x" (its product
with every other pair feature, so a contrarian claim can weigh its evidence differently). P(narrative) comes from
the shipped fast narratives model's gate (${narrative.json.model}, its features, settings and Platt scaling) refitted
without the verification dev claims and their evidence (${narrative.json.heldOut} of its stance rows: FLICC repeats
some Climate-FEVER claims), and for training, out of fold: per verifier claim fold, refitted also without that
fold's claims and their evidence (src/verification/claim-narrative.ts), so no P(narrative) comes from a gate that saw
the claim. Same training otherwise (the first row reproduces the shipped pair model). Out-of-fold weighted F1 on
train is what would choose:

${table(["pair model", "groups", "out-of-fold weighted F1, one sentence", "out-of-fold weighted F1, more sentences"], narrativeOof)}

${oofSum.slice(1).some((x) => x > oofSum[0] + 1e-9) ? "A narrative variant beats the shipped groups out of fold (summed over the kinds)" : "Neither narrative variant beats the shipped groups out of fold (summed over the kinds), so neither is shipped"}; their dev
figures (read once) are in the tables above, with paired intervals against the shipped model and builtin:v3 (the
issue's target: Climate-FEVER dev weighted F1 at least 0.03 above builtin:v3, SciFact not lower).

### Relevance gate (models/relevance)

P(the abstract is about the claim) at the gate ${RELEVANCE_GATE}, on dev pairs built as the training pairs are
(gold Supports/Refutes pairs against other claims' evidence; models/relevance/CARD.md); "about" is the positive
class.

${table(["dev pairs", "pairs", "precision (95%)", "recall (95%)"], gateRows)}

Gold NEI dev pairs (never judged for relevance) the gate passes: ${neiPassed.join(", ")}.

### Out of scope (models/scope)

Accuracy of "in scope" (an English claim about climate) against climate / not climate on dev texts:

${table(["dev texts", "texts", "accuracy (95%)"], scopeRows)}

Language rule: ${foreignFlagged} of ${FOREIGN.length} hand-written claims in Spanish, French, German, Portuguese,
Italian, Dutch, Chinese, Russian, Arabic and Japanese flagged as not English; ${englishFalseAlarms} of
${scopeData.dev.length} English dev texts flagged (false alarms). Hand-written off-topic English claims out of scope:
${offTopicFlagged} of ${OFF_TOPIC.length}; of a second hand-written set (bench/fixtures/scope-hand.json, written before
the detector's lexicon feature and weather rule, never used for a choice): off-topic ${handOffTopic} of
${scopeHand.offTopic.length} out of scope (8 of them weather small talk), climate, weather-extreme trends, energy and
emissions ${handInScope} of ${scopeHand.inScope.length} in scope (the everyday English training claims,
src/scope/everyday-english.ts, were written after this set's misses were known: none of its sentences is there, but
some of its subjects, money and health myths, are). The weather small-talk rule flags ${weatherFalseAlarms} of the
${climateDev.length} climate dev texts. Off-topic claims it still calls in scope:
${handMissed.map((t) => `"${t}"`).join(", ")}. The language check alone (no climate model): "${FOREIGN[0]}" →
${scopeOf(FOREIGN[0], null).in_scope ? "in scope" : "out of scope"}.

### Hand-written claims through \`check\` (default index, k = 5)

"About" is the number of abstracts at or above the gate; "sided before" is how many of the gated abstracts the
verifier alone had called Supports or Refutes (what the page showed before the gate). ${evidenceDisagreements} of
${evidenceItems} evidence items have a label that is not their most probable class.

${table(["claim", "in scope", "about / shown", "gated that had sided before", "lean (Supports, Refutes)", "human review"], handRows)}

### Speed

\`check\` over these ${results.length} claims after 3 warm-up checks: p50 ${percentile(totals, 50).toFixed(0)} ms, p95
${percentile(totals, 95).toFixed(0)} ms (target p50 under 400 ms). Verification with the direction check:
${pairsPerSecond.toFixed(0)} pairs/s over the ${pairs.length} dev pairs in one process (target at least 40).
`,
  };
};
