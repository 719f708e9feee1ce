/**
 * `climatecheck train relevance`: the relevance gate (relevance.ts) from the verification train split, its L2 by
 * 5-fold cross-validation over train claims, precision and recall at the gate on the dev split (never used for a
 * choice), written as models/relevance/model.json and CARD.md. Deterministic.
 */
import { join } from "node:path";
import { MODELS_DIR } from "../data/paths.ts";
import { writeFileAtomic } from "../data/tables.ts";
import { expectedCalibrationError } from "../learning/calibration.ts";
import { trainLogistic } from "../learning/logistic.ts";
import { mulberry32 } from "../learning/random.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { loadScopeDetector } from "../scope/scope.ts";
import { NEI } from "../types.ts";
import type { SourcedExample } from "./examples.ts";
import { IdfTable } from "./idf.ts";
import { profileMemo, type TextProfile } from "./lexical.ts";
import {
  abstractText,
  RELEVANCE_FEATURES,
  RELEVANCE_FORMAT,
  RELEVANCE_GATE,
  type RelevanceJson,
  relevanceFeatures,
  type SubjectScore,
} from "./relevance.ts";
import { claimFolds, loadVerificationData } from "./train.ts";

/** One labelled pair of the gate: about the claim (1) or not (0). */
export interface RelevancePair {
  claimId: string;
  source: SourcedExample["source"];
  claim: string;
  sentences: string[];
  title?: string;
  about: 0 | 1;
  /** "judged" (gold Supports/Refutes), "other-corpus" or "same-corpus" (another claim's evidence). */
  kind: "judged" | "other-corpus" | "same-corpus";
}

/**
 * Gold Supports/Refutes pairs (about the claim), and per claim two texts of other claims' pairs (not about it): the
 * closest by rarity-weighted overlap in the other corpus, and one from its own corpus (the closest for SciFact,
 * whose claims are on many subjects; one at random for Climate-FEVER, where a close one is often on the same
 * subject). Only texts of the same split are used, so dev stays apart.
 */
export function relevancePairs(examples: readonly SourcedExample[], seed = 13): RelevancePair[] {
  const rng = mulberry32(seed);
  const memo = profileMemo();
  const idf = IdfTable.fit(examples.flatMap((e) => [e.claim, ...e.sentences]).map(memo.of));
  const texts = {
    scifact: new Map<string, SourcedExample>(),
    "climate-fever": new Map<string, SourcedExample>(),
    own: new Map<string, SourcedExample>(),
  };
  for (const e of examples) texts[e.source].set(e.abstractId, e);
  const pools = {
    scifact: [...texts.scifact.values()],
    "climate-fever": [...texts["climate-fever"].values()],
    own: [...texts.own.values()],
  };
  const byClaim = new Map<string, SourcedExample[]>();
  for (const e of examples) byClaim.set(e.claimId, [...(byClaim.get(e.claimId) ?? []), e]);
  const postingCache = new Map<readonly SourcedExample[], Map<string, SourcedExample[]>>();
  const postingsOf = (pool: readonly SourcedExample[]) => {
    let m = postingCache.get(pool);
    if (!m) {
      m = new Map();
      for (const e of pool)
        for (const k of new Set(e.sentences.flatMap((t) => [...memo.of(t).keys])))
          m.set(k, [...(m.get(k) ?? []), e]);
      postingCache.set(pool, m);
    }
    return m;
  };
  const overlap = (claim: TextProfile, e: SourcedExample) => {
    const keys = [...claim.keys];
    const w = keys.map((k) => idf.weight(k));
    const total = w.reduce((a, b) => a + b, 0) || 1;
    const sentences = e.sentences.map(memo.of);
    return keys.reduce((a, k, i) => a + (sentences.some((s) => s.keys.has(k)) ? w[i] : 0), 0) / total;
  };
  const out: RelevancePair[] = [];
  for (const pairs of byClaim.values()) {
    const first = pairs[0];
    const own = new Set(pairs.map((p) => p.abstractId));
    const claim = memo.of(first.claim);
    // The closest text of the pool (every text sharing a claim key is scored; the retriever finds exactly such
    // texts), or one drawn at random; never one of the claim's own texts.
    const pick = (pool: readonly SourcedExample[], closest: boolean): SourcedExample | undefined => {
      const usable = (e: SourcedExample) => !own.has(e.abstractId) && e.claim !== first.claim;
      if (!closest) {
        for (let d = 0; d < 50 && pool.length > 0; d++) {
          const e = pool[Math.floor(rng() * pool.length)];
          if (usable(e)) return e;
        }
        return undefined;
      }
      const postings = postingsOf(pool);
      const seen = new Set<SourcedExample>();
      for (const k of claim.keys) for (const e of postings.get(k) ?? []) seen.add(e);
      let best: SourcedExample | undefined;
      let bestScore = Number.NEGATIVE_INFINITY;
      for (const e of seen) {
        if (!usable(e)) continue;
        const score = overlap(claim, e);
        if (score > bestScore) [best, bestScore] = [e, score];
      }
      return best ?? pick(pool, false);
    };
    for (const p of pairs)
      if (p.label !== NEI)
        out.push({ ...common(p, first), sentences: p.sentences, title: p.title, about: 1, kind: "judged" });
    const other = first.source === "scifact" ? "climate-fever" : "scifact";
    const negatives: [SourcedExample | undefined, RelevancePair["kind"]][] = [
      [pick(pools[other], true), "other-corpus"],
      [pick(pools[first.source], first.source === "scifact"), "same-corpus"],
    ];
    for (const [e, kind] of negatives)
      if (e) out.push({ ...common(first, first), sentences: e.sentences, title: e.title, about: 0, kind });
  }
  return out;
}

const common = (p: SourcedExample, first: SourcedExample) => ({
  claimId: first.claimId,
  source: first.source,
  claim: p.claim,
});

export interface GateReport {
  l2: number;
  cvLogLoss: Record<string, number>;
  dev: Record<"all" | SourcedExample["source"], { precision: number; recall: number; pairs: number }>;
  devEce: number;
  /** Dev gold NEI pairs (not used in training): share the gate passes as about the claim. */
  devNeiPassed: Record<SourcedExample["source"], number>;
  trainPairs: number;
}

const L2_GRID = [1e-4, 1e-3, 1e-2, 1e-1, 1];

/** Fits the gate on train pairs (L2 by 5-fold CV over claims) and reports it on dev pairs. */
export function trainRelevanceGate(
  trainExamples: readonly SourcedExample[],
  devExamples: readonly SourcedExample[],
  subject: SubjectScore,
): { json: RelevanceJson; report: GateReport; dev: RelevancePair[]; devProbs: number[] } {
  const memo = profileMemo();
  const idf = IdfTable.fit(trainExamples.flatMap((e) => [e.claim, ...e.sentences]).map(memo.of));
  const subjects = new Map<string, number>();
  const subjectOf = (text: string) => {
    let p = subjects.get(text);
    if (p === undefined) {
      p = subject(text);
      subjects.set(text, p);
    }
    return p;
  };
  const features = (p: Pick<RelevancePair, "claim" | "sentences" | "title">) =>
    relevanceFeatures(
      idf,
      memo.of(p.claim),
      p.sentences.map(memo.of),
      p.title ? memo.of(p.title) : undefined,
      {
        claim: subjectOf(p.claim),
        abstract: subjectOf(abstractText(p.sentences, p.title)),
      },
    );
  const train = relevancePairs(trainExamples);
  const raw = train.map(features);
  const standardiser = fitStandardiser(raw);
  const X = raw.map((x) => standardise(x, standardiser));
  const Y = train.map((p) => p.about);
  const fit = (rows: readonly number[], l2: number) =>
    trainLogistic(
      rows.map((r) => X[r]),
      rows.map((r) => Y[r]),
      RELEVANCE_FEATURES.length,
      { kind: "binary", classes: 2, l2, maxIter: 300 },
    );
  const cvLogLoss: Record<string, number> = {};
  const folds = claimFolds(
    train.map((p) => p.claimId),
    5,
  );
  for (const l2 of L2_GRID) {
    let loss = 0;
    for (const split of folds) {
      const m = fit(split.fit, l2);
      for (const r of split.held) loss -= Math.log(Math.max(1e-12, m.predictProba(X[r])[Y[r]]));
    }
    cvLogLoss[String(l2)] = loss / train.length;
  }
  const l2 = L2_GRID.reduce((a, b) => (cvLogLoss[String(b)] < cvLogLoss[String(a)] - 1e-9 ? b : a));
  const model = fit(
    train.map((_, i) => i),
    l2,
  );
  const json: RelevanceJson = {
    format: RELEVANCE_FORMAT,
    idf: idf.json,
    standardiser,
    model: model.toJSON(),
  };
  const dev = relevancePairs(devExamples);
  const devProbs = dev.map((p) => model.predictProba(standardise(features(p), standardiser))[1]);
  const pr = (rows: number[]) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const r of rows) {
      const passed = devProbs[r] >= RELEVANCE_GATE;
      if (passed && dev[r].about) tp++;
      else if (passed) fp++;
      else if (dev[r].about) fn++;
    }
    return { precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn), pairs: rows.length };
  };
  const all = dev.map((_, i) => i);
  const devNei = (source: SourcedExample["source"]) => {
    const nei = devExamples.filter((e) => e.source === source && e.label === NEI);
    const passed = nei.filter(
      (e) => model.predictProba(standardise(features(e), standardiser))[1] >= RELEVANCE_GATE,
    ).length;
    return passed / Math.max(1, nei.length);
  };
  const report: GateReport = {
    l2,
    cvLogLoss,
    dev: {
      all: pr(all),
      scifact: pr(all.filter((i) => dev[i].source === "scifact")),
      "climate-fever": pr(all.filter((i) => dev[i].source === "climate-fever")),
      own: pr(all.filter((i) => dev[i].source === "own")),
    },
    devEce: expectedCalibrationError(
      devProbs.map((p) => [1 - p, p]),
      dev.map((p) => p.about),
    ),
    devNeiPassed: {
      scifact: devNei("scifact"),
      "climate-fever": devNei("climate-fever"),
      own: devNei("own"),
    },
    trainPairs: train.length,
  };
  return { json, report, dev, devProbs };
}

const f3 = (x: number) => x.toFixed(3);

export async function buildRelevanceGate(options: {
  dataDir?: string;
  outDir?: string;
  log?: (m: string) => void;
}): Promise<GateReport> {
  const log = options.log ?? (() => {});
  const outDir = options.outDir ?? join(MODELS_DIR, "relevance");
  const { train, dev } = await loadVerificationData(options.dataDir);
  const scope = await loadScopeDetector();
  const { json, report } = trainRelevanceGate(train, dev, (t) => scope.pClimate(t));
  await writeFileAtomic(join(outDir, "model.json"), `${JSON.stringify(json)}\n`);
  await writeFileAtomic(join(outDir, "CARD.md"), card(report));
  log(
    `relevance: L2 ${report.l2}; dev precision ${f3(report.dev.all.precision)}, recall ${f3(report.dev.all.recall)}; wrote ${outDir}`,
  );
  return report;
}

function card(r: GateReport): string {
  const rows = (["all", "scifact", "climate-fever"] as const).map(
    (s) => `| ${s} | ${r.dev[s].pairs} | ${f3(r.dev[s].precision)} | ${f3(r.dev[s].recall)} |`,
  );
  return `# Relevance gate: is this abstract about the claim?

P(the abstract is about the claim's subject) for each claim-abstract pair the product shows. Code:
\`src/verification/relevance.ts\` (inference), \`src/verification/build-relevance.ts\` (training). Pairs below
${RELEVANCE_GATE} are shown as "not about this claim": they take no side and are left out of the summary.

## Data
The verification train/dev split by claim id (models/verification/CARD.md), so no dev claim is trained on.
- About the claim: every gold Supports / Refutes pair (SciFact evidence abstracts, Climate-FEVER evidence
  sentences), judged relevant by the data sets' annotators.
- Not about it: per claim, another claim's evidence text from the other corpus (the closest by rarity-weighted
  overlap, as a retriever would bring it: a biomedical abstract for a climate claim, a climate sentence for a
  biomedical claim) and one from its own corpus (the closest for SciFact; one at random for Climate-FEVER, where a
  close one is often on the same subject).
- Gold NEI pairs are left out: whether they are about the claim was not judged.
${r.trainPairs} training pairs.

## Method
Binary logistic regression on ${RELEVANCE_FEATURES.length} standardised features: ${RELEVANCE_FEATURES.join(", ")}
(rarity-weighted recall of the claim's keys in the best and second sentence, the best two, the whole abstract and
the title; the rarest missing claim key; the abstract's and the claim's length; the plain share of claim keys found
and the weighted recall without the best key found, so one shared rare word counts for less; and the subject of
each side, the scope model's P(about climate) of the claim and of the abstract (models/scope) and their gap). The
feature set was chosen by the same cross-validated log loss among three (the subject features as a product
"both on the same side", alone or times the overlaps: 0.258; these: 0.221). Document frequencies counted on
the train texts. L2 ${r.l2}, chosen by 5-fold cross-validated log loss over train claims
(${Object.entries(r.cvLogLoss)
    .map(([k, v]) => `${k}: ${f3(v)}`)
    .join(", ")}). A logistic regression's probabilities are its calibration; dev ECE ${f3(r.devEce)}.

The verifier's own probabilities are not an input: on train pairs they are in-sample (the verifier was fitted on
them), so a gate learnt from them would trust them more than they deserve on new pairs.

## Dev figures (at the gate, ${RELEVANCE_GATE}; "about the claim" is the positive class)
| dev pairs | pairs | precision | recall |
| --- | --- | --- | --- |
${rows.join("\n")}

Gold NEI dev pairs (on-topic or not, never judged for relevance) passed as about the claim: SciFact
${f3(r.devNeiPassed.scifact)}, Climate-FEVER ${f3(r.devNeiPassed["climate-fever"])}.

## Retrain
\`climatecheck train relevance\` (after \`climatecheck train scope\`, whose model it reads): deterministic, about a
minute.
`;
}
