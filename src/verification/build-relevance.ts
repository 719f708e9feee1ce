/**
 * `climatecheck train relevance`: the relevance gate (relevance.ts). Trained on our judged pairs of train-split
 * claims (data/judged: about the claim's subject or not), with claims written from abstracts (about their own
 * abstract) and the stand-in sets' pairs (SciFact, Climate-FEVER) weighed in; the feature family, the weights and
 * the L2 are chosen by 5-fold cross-validated log loss on the held-out judged pairs (folds by claim). Figures at the
 * gate on the judged dev claims (never used for a choice); written as models/relevance/model.json and CARD.md.
 * Deterministic.
 */
import { join } from "node:path";
import { BUILTIN_CORPUS } from "../data/builtin-corpus.ts";
import { readCorpus } from "../data/climatecheck.ts";
import {
  type JudgedClaim,
  type Judgement,
  ownDataFiles,
  readJudgedClaims,
  readJudgements,
  readWrittenClaims,
  type WrittenClaim,
} from "../data/judged.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { writeFileAtomic } from "../data/tables.ts";
import { openUseLite } from "../encoders/sentence-encoder.ts";
import { USE_LITE_NAME } from "../encoders/use-lite-model.ts";
import { expectedCalibrationError } from "../learning/calibration.ts";
import { trainLogistic } from "../learning/logistic.ts";
import { mulberry32 } from "../learning/random.ts";
import { fitStandardiser, standardise } from "../learning/standardise.ts";
import { loadScopeDetector } from "../scope/scope.ts";
import { splitSentences } from "../text/sentences.ts";
import { NEI } from "../types.ts";
import type { SourcedExample } from "./examples.ts";
import { IdfTable } from "./idf.ts";
import { profileMemo, type TextProfile } from "./lexical.ts";
import {
  abstractText,
  cosine,
  GATE_LEAD,
  type GateEmbed,
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
  /**
   * "judged" (gold Supports/Refutes of a stand-in set), "other-corpus" or "same-corpus" (another claim's evidence),
   * "own-judged" (our judgement of a claim against a built-in abstract), "own-written" (a claim written from it).
   */
  kind: "judged" | "other-corpus" | "same-corpus" | "own-judged" | "own-written";
}

/** A built-in abstract as the gate reads it; undefined when not in the index. */
export type AbstractOf = (id: string) => { title?: string; sentences: string[] } | undefined;

/**
 * Our pairs: the judgements of the claims of `split` (about or not, as judged) and, for train, each claim written
 * from an abstract against that abstract (about it by construction).
 */
export function ownRelevancePairs(
  claims: readonly JudgedClaim[],
  judgements: readonly Judgement[],
  written: readonly WrittenClaim[],
  abstractOf: AbstractOf,
  split: "train" | "dev",
): RelevancePair[] {
  const byId = new Map(claims.map((c) => [c.id, c]));
  const out: RelevancePair[] = [];
  for (const j of judgements) {
    const c = byId.get(j.claimId);
    const doc = abstractOf(j.abstractId);
    if (!c || c.split !== split || !doc) continue;
    out.push({
      claimId: c.id,
      source: "own",
      claim: c.claim,
      sentences: doc.sentences,
      title: doc.title,
      about: j.about ? 1 : 0,
      kind: "own-judged",
    });
  }
  if (split === "train")
    for (const w of written) {
      const doc = abstractOf(w.abstractId);
      if (doc)
        out.push({
          claimId: w.id,
          source: "own",
          claim: w.claim,
          sentences: doc.sentences,
          title: doc.title,
          about: 1,
          kind: "own-written",
        });
    }
  return out;
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

/** One configuration tried by cross-validation, with its held-out log loss and AUC on judged pairs. */
export interface GateTrial {
  family: "lexical" | "lexical+use";
  standInWeight: number;
  writtenWeight: number;
  l2: number;
  logLoss: number;
  auc: number;
}

export interface GateReport {
  chosen: GateTrial;
  /** The best L2 of each family and weights, for the card. */
  trials: GateTrial[];
  /** At the gate on the judged dev pairs (about = positive class). */
  dev: {
    pairs: number;
    aboutRate: number;
    auc: number;
    precision: number;
    recall: number;
    passed: number;
    ece: number;
  };
  /** The same pairs under the gate this one replaces, when given. */
  previous?: { auc: number; precision: number; recall: number; passed: number };
  /** At the gate on the stand-in sets' dev pairs (their gold Supports/Refutes vs other claims' evidence). */
  standInDev: { precision: number; recall: number; pairs: number };
  trainPairs: Record<RelevancePair["kind"], number>;
}

const L2_GRID = [1e-3, 1e-2, 1e-1];
const STAND_IN_WEIGHTS = [0, 0.25, 1];
const WRITTEN_WEIGHTS = [0, 0.5, 1];

/** Area under the ROC curve (ties count half). */
export function rocAuc(labels: readonly (0 | 1)[], scores: readonly number[]): number {
  const order = scores.map((s, i) => [s, labels[i]] as const).sort((a, b) => a[0] - b[0]);
  let pos = 0;
  let neg = 0;
  let rankSum = 0;
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j < order.length && order[j][0] === order[i][0]) j++;
    const midRank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (order[k][1] === 1) rankSum += midRank;
    i = j;
  }
  for (const [, y] of order)
    if (y === 1) pos++;
    else neg++;
  if (pos === 0 || neg === 0) return Number.NaN;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

/** Precision, recall and the share passed at the gate. */
function atGate(labels: readonly (0 | 1)[], probs: readonly number[]) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  probs.forEach((p, i) => {
    const passed = p >= RELEVANCE_GATE;
    if (passed && labels[i]) tp++;
    else if (passed) fp++;
    else if (labels[i]) fn++;
  });
  return {
    precision: tp / Math.max(1, tp + fp),
    recall: tp / Math.max(1, tp + fn),
    passed: (tp + fp) / Math.max(1, labels.length),
  };
}

/**
 * Fits the gate: the feature family, the stand-in and written-claim weights and the L2 by 5-fold cross-validated log
 * loss on the held-out judged train pairs (folds by claim; written claims and stand-in pairs only ever train), then
 * the chosen configuration on all train pairs; reported on the judged dev pairs.
 */
export async function trainRelevanceGate(
  data: {
    standIn: { train: readonly SourcedExample[]; dev: readonly SourcedExample[] };
    own: { train: readonly RelevancePair[]; dev: readonly RelevancePair[] };
  },
  subject: SubjectScore,
  embed: GateEmbed,
  log: (m: string) => void = () => {},
): Promise<{ json: RelevanceJson; report: GateReport; devProbs: number[] }> {
  const memo = profileMemo();
  const idf = IdfTable.fit(
    [...data.standIn.train, ...data.own.train].flatMap((e) => [e.claim, ...e.sentences]).map(memo.of),
  );
  const subjects = new Map<string, number>();
  const subjectOf = (text: string) => {
    let p = subjects.get(text);
    if (p === undefined) {
      p = subject(text);
      subjects.set(text, p);
    }
    return p;
  };
  const lexical = (p: RelevancePair) =>
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
  // The similarity of every pair: all distinct texts embedded in one call (many small calls are much slower).
  const withSimilarity = async (pairs: readonly RelevancePair[]) => {
    const leads = pairs.map((p) =>
      GATE_LEAD.text({ id: "", title: p.title, abstract: p.sentences.join(" "), sentences: p.sentences }),
    );
    const texts = [...new Set([...pairs.map((p) => p.claim), ...leads])];
    const vectors = await embed(texts);
    const of = new Map(texts.map((t, i) => [t, vectors[i]]));
    return pairs.map((p, i) => [
      ...lexical(p),
      cosine(of.get(p.claim) as Float32Array, of.get(leads[i]) as Float32Array),
    ]);
  };
  const standIn = relevancePairs(data.standIn.train);
  const train = [...data.own.train, ...standIn];
  log(`relevance: ${train.length} train pairs; similarities ...`);
  const rawAll = await withSimilarity(train);
  const Y = train.map((p) => p.about);
  const judgedRows = train.flatMap((p, i) => (p.kind === "own-judged" ? [i] : []));
  const otherRows = train.flatMap((p, i) => (p.kind === "own-judged" ? [] : [i]));
  const folds = claimFolds(
    judgedRows.map((r) => train[r].claimId),
    5,
  );
  const dimOf = (family: GateTrial["family"]) =>
    RELEVANCE_FEATURES.length + (family === "lexical+use" ? 1 : 0);
  const cols = (family: GateTrial["family"], x: number[]) => x.slice(0, dimOf(family));
  const weightOf = (r: number, t: Pick<GateTrial, "standInWeight" | "writtenWeight">) =>
    train[r].kind === "own-judged" ? 1 : train[r].kind === "own-written" ? t.writtenWeight : t.standInWeight;
  const fit = (rows: number[], t: Omit<GateTrial, "logLoss" | "auc">) => {
    const used = rows.filter((r) => weightOf(r, t) > 0);
    const raw = used.map((r) => cols(t.family, rawAll[r]));
    const standardiser = fitStandardiser(raw);
    const model = trainLogistic(
      raw.map((x) => standardise(x, standardiser)),
      used.map((r) => Y[r]),
      dimOf(t.family),
      { kind: "binary", classes: 2, l2: t.l2, maxIter: 300, sampleWeights: used.map((r) => weightOf(r, t)) },
    );
    return (x: number[]) => model.predictProba(standardise(cols(t.family, x), standardiser))[1];
  };
  const trials: GateTrial[] = [];
  for (const family of ["lexical", "lexical+use"] as const)
    for (const standInWeight of STAND_IN_WEIGHTS)
      for (const writtenWeight of WRITTEN_WEIGHTS)
        for (const l2 of L2_GRID) {
          const t = { family, standInWeight, writtenWeight, l2 };
          const held: number[] = [];
          const probs: number[] = [];
          for (const split of folds) {
            const f = fit([...split.fit.map((k) => judgedRows[k]), ...otherRows], t);
            for (const k of split.held) {
              held.push(judgedRows[k]);
              probs.push(f(rawAll[judgedRows[k]]));
            }
          }
          const logLoss =
            -held.reduce((a, r, i) => a + Math.log(Math.max(1e-12, Y[r] ? probs[i] : 1 - probs[i])), 0) /
            held.length;
          trials.push({
            ...t,
            logLoss,
            auc: rocAuc(
              held.map((r) => Y[r]),
              probs,
            ),
          });
        }
  const chosen = trials.reduce((a, b) => (b.logLoss < a.logLoss - 1e-9 ? b : a));
  log(
    `relevance: chosen ${chosen.family}, stand-in weight ${chosen.standInWeight}, written ${chosen.writtenWeight}, L2 ${chosen.l2} (CV log loss ${f3(chosen.logLoss)}, AUC ${f3(chosen.auc)})`,
  );
  // The final model, written out with its own standardiser.
  const used = train.map((_, i) => i).filter((r) => weightOf(r, chosen) > 0);
  const raw = used.map((r) => cols(chosen.family, rawAll[r]));
  const standardiser = fitStandardiser(raw);
  const model = trainLogistic(
    raw.map((x) => standardise(x, standardiser)),
    used.map((r) => Y[r]),
    dimOf(chosen.family),
    {
      kind: "binary",
      classes: 2,
      l2: chosen.l2,
      maxIter: 300,
      sampleWeights: used.map((r) => weightOf(r, chosen)),
    },
  );
  const json: RelevanceJson = {
    format: RELEVANCE_FORMAT,
    idf: idf.json,
    features: [...RELEVANCE_FEATURES, ...(chosen.family === "lexical+use" ? ["use_title_lead"] : [])],
    ...(chosen.family === "lexical+use" ? { encoder: USE_LITE_NAME } : {}),
    standardiser,
    model: model.toJSON(),
  };
  const predict = (x: number[]) => model.predictProba(standardise(cols(chosen.family, x), standardiser))[1];
  const devRaw = await withSimilarity(data.own.dev);
  const devY = data.own.dev.map((p) => p.about);
  const devProbs = devRaw.map(predict);
  const standInDevPairs = relevancePairs(data.standIn.dev);
  const standInProbs = (await withSimilarity(standInDevPairs)).map(predict);
  const standInAt = atGate(
    standInDevPairs.map((p) => p.about),
    standInProbs,
  );
  const count = (kind: RelevancePair["kind"]) => train.filter((p) => p.kind === kind).length;
  const report: GateReport = {
    chosen,
    trials: bestL2(trials),
    dev: {
      pairs: devY.length,
      aboutRate: devY.filter(Boolean).length / Math.max(1, devY.length),
      auc: rocAuc(devY, devProbs),
      ...atGate(devY, devProbs),
      ece: expectedCalibrationError(
        devProbs.map((p) => [1 - p, p]),
        devY,
      ),
    },
    standInDev: { ...standInAt, pairs: standInDevPairs.length },
    trainPairs: {
      judged: count("judged"),
      "other-corpus": count("other-corpus"),
      "same-corpus": count("same-corpus"),
      "own-judged": count("own-judged"),
      "own-written": count("own-written"),
    },
  };
  return { json, report, devProbs };
}

/** Per family and weights, the trial with the best L2. */
function bestL2(trials: readonly GateTrial[]): GateTrial[] {
  const best = new Map<string, GateTrial>();
  for (const t of trials) {
    const key = `${t.family}|${t.standInWeight}|${t.writtenWeight}`;
    const b = best.get(key);
    if (!b || t.logLoss < b.logLoss) best.set(key, t);
  }
  return [...best.values()];
}

const f3 = (x: number) => x.toFixed(3);

export async function buildRelevanceGate(options: {
  dataDir?: string;
  ownDataDir?: string;
  outDir?: string;
  log?: (m: string) => void;
}): Promise<GateReport> {
  const log = options.log ?? (() => {});
  const outDir = options.outDir ?? join(MODELS_DIR, "relevance");
  const standIn = await loadVerificationData(options.dataDir);
  const files = ownDataFiles(options.ownDataDir);
  const [claims, judgements, written] = await Promise.all([
    readJudgedClaims(files.claims),
    readJudgements(files.judgements),
    readWrittenClaims(files.writtenClaims),
  ]);
  const corpus = await builtinAbstracts();
  const abstractOf: AbstractOf = (id) => corpus.get(id);
  const own = {
    train: ownRelevancePairs(claims, judgements, written, abstractOf, "train"),
    dev: ownRelevancePairs(claims, judgements, written, abstractOf, "dev"),
  };
  const scope = await loadScopeDetector();
  const use = await openUseLite();
  try {
    const { json, report } = await trainRelevanceGate(
      { standIn, own },
      (t) => scope.pClimate(t),
      (texts) => use.embed(texts),
      log,
    );
    await writeFileAtomic(join(outDir, "model.json"), `${JSON.stringify(json)}\n`);
    await writeFileAtomic(join(outDir, "CARD.md"), card(report));
    log(
      `relevance: judged dev AUC ${f3(report.dev.auc)}, precision ${f3(report.dev.precision)}, recall ${f3(report.dev.recall)}; wrote ${outDir}`,
    );
    return report;
  } finally {
    await use.close();
  }
}

/** The built-in corpus's abstracts by id, split into sentences as the index splits them. */
async function builtinAbstracts(): Promise<Map<string, { title?: string; sentences: string[] }>> {
  const out = new Map<string, { title?: string; sentences: string[] }>();
  for await (const { abstract: a } of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" }))
    out.set(a.id, { title: a.title, sentences: a.sentences ?? splitSentences(a.abstract) });
  return out;
}

function card(r: GateReport): string {
  const trial = (t: GateTrial) =>
    `| ${t.family} | ${t.standInWeight} | ${t.writtenWeight} | ${t.l2} | ${f3(t.logLoss)} | ${f3(t.auc)} |`;
  return `# Relevance gate: is this abstract about the claim?

P(the abstract is about the claim's subject) for each claim-abstract pair the product shows. Code:
\`src/verification/relevance.ts\` (inference), \`src/verification/build-relevance.ts\` (training). Pairs below
${RELEVANCE_GATE} are shown as "not about this claim": they take no side and are left out of the summary. Its
probability does not depend on the rank: an index with nothing about a claim yields nothing about it.

## Data
- **Our judged pairs** (\`data/judged\`, our own data, CC BY 4.0): claims as people post them, each against the
  top 5 of the shipped pipeline and of a plain BM25 on the built-in corpus, judged by careful reading as about the
  claim's subject or not. Train-split claims only (the split by claim was fixed before any model work):
  ${r.trainPairs["own-judged"]} pairs. These hold the hard negatives: abstracts on the same broad topic, found by a
  retriever, that are about something else.
- **Claims written from abstracts** (\`data/abstract-claims\`, our own data, CC BY 4.0): each against the abstract
  it was written from, about it by construction: ${r.trainPairs["own-written"]} pairs.
- **Stand-in sets** (SciFact CC BY 4.0, Climate-FEVER): their gold Supports/Refutes pairs against other claims'
  evidence, from the verification train split: ${r.trainPairs.judged + r.trainPairs["other-corpus"] + r.trainPairs["same-corpus"]} pairs.

## Method
Binary logistic regression on standardised features: ${RELEVANCE_FEATURES.join(", ")} (rarity-weighted overlap
of the claim's keys with the best sentences, the title and the whole abstract; key counts; the scope model's
P(about climate) of each side and their gap)${r.chosen.family === "lexical+use" ? ", and use_title_lead, the USE-lite cosine of the claim with the abstract's title and lead (the text the index embeds)" : ""}.
The feature family (with or without the USE-lite similarity), how much the written claims and the stand-in pairs
weigh, and the L2 were chosen by 5-fold cross-validated log loss on the held-out judged train pairs (folds by
claim; written and stand-in pairs only ever train). Chosen: **${r.chosen.family}, stand-in weight
${r.chosen.standInWeight}, written weight ${r.chosen.writtenWeight}, L2 ${r.chosen.l2}** (CV log loss
${f3(r.chosen.logLoss)}, AUC ${f3(r.chosen.auc)}). Best L2 of each other configuration:

| features | stand-in weight | written weight | L2 | CV log loss | CV AUC |
| --- | --- | --- | --- | --- | --- |
${r.trials.map(trial).join("\n")}

A logistic regression's probabilities are its calibration: trained on judged pairs where about one in five is
about the claim, it passes an abstract only when that is more likely than not.

## Dev figures (judged dev claims, never used for a choice; "about the claim" is the positive class)
| pairs | judged about | AUC | passed | precision at ${RELEVANCE_GATE} | recall at ${RELEVANCE_GATE} | ECE |
| --- | --- | --- | --- | --- | --- | --- |
| ${r.dev.pairs} | ${f3(r.dev.aboutRate)} | ${f3(r.dev.auc)} | ${f3(r.dev.passed)} | ${f3(r.dev.precision)} | ${f3(r.dev.recall)} | ${f3(r.dev.ece)} |

Stand-in dev pairs (SciFact and Climate-FEVER gold evidence against other claims' evidence, ${r.standInDev.pairs}
pairs): precision ${f3(r.standInDev.precision)}, recall ${f3(r.standInDev.recall)}.

What a user sees with this gate, on the judged test claims: BENCHMARKS.md, "What a user sees" (\`npm run bench -- judged\`).

## Retrain
\`climatecheck train relevance\` (after \`climatecheck train scope\`, whose model it reads): deterministic, a few
minutes (USE-lite similarities of about ten thousand texts, cached after the first run).
`;
}
