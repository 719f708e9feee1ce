/**
 * What was tried to lift the built-in verifier on Climate-FEVER pairs (its weak dev set), each idea as extra
 * pair features, sample weights or another stacked TF-IDF model on top of the shipped one-sentence pair model,
 * measured the same way: 5-fold out-of-fold weighted F1 on the train split (what a choice may be based on) and
 * the dev split. None is shipped: none moved either figure by more than about 0.01.
 */

import { trainingFiles } from "../src/data/paths.ts";
import { readClimateFever } from "../src/data/training-sets.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { cosine } from "../src/encoders/vector.ts";
import { bootstrapInterval, groupResamples } from "../src/evaluation/bootstrap.ts";
import { verificationF1 } from "../src/evaluation/metrics.ts";
import { fitTemperature, softmaxWithTemperature } from "../src/learning/calibration.ts";
import { weightedArgmax } from "../src/learning/decision-weights.ts";
import { trainLogistic } from "../src/learning/logistic.ts";
import { concatSparse, type SparseVector } from "../src/learning/sparse.ts";
import { claimFolds, foldOf } from "../src/learning/split.ts";
import { fitStandardiser, standardise } from "../src/learning/standardise.ts";
import { TfidfVectorizer } from "../src/learning/tfidf.ts";
import { NarrativeClassifier } from "../src/narratives/classifier.ts";
import { LABELS, type Label } from "../src/types.ts";
import type { SourcedExample } from "../src/verification/examples.ts";
import { DEFAULT_PAIR_GROUPS, pairFeatures } from "../src/verification/features.ts";
import { IdfTable } from "../src/verification/idf.ts";
import { profile, profileMemo } from "../src/verification/lexical.ts";
import { pairCues } from "../src/verification/model.ts";
import {
  fitPairVectorizer,
  fitTfidfPairLR,
  pairTfidfDim,
  pairTfidfFeatures,
} from "../src/verification/tfidf-pair.ts";
import { loadVerificationData, neiAsSupportsShare, tuneDecision } from "../src/verification/train.ts";
import { type Bench, table } from "./report.ts";

/** The same folds as training (train.ts). */
const FOLDS = 5;
const labelIndex = (e: SourcedExample) => LABELS.indexOf(e.label);
const log = (m: string) => process.stderr.write(`  ${new Date().toISOString().slice(11, 19)} ${m}\n`);
const logOdds = (p: ArrayLike<number>, k: number) => Math.log((p[k] + 1e-4) / (p[2] + 1e-4));

/** Out-of-fold probabilities on train, final-model probabilities on dev. */
interface Stacked {
  train: Float32Array[];
  dev: Float32Array[];
}

/** Extra features of one pair: `i` indexes train or dev, `dev` says which. */
type Extra = (e: SourcedExample, i: number, dev: boolean) => number[];

interface Variant {
  name: string;
  tfidf?: Stacked;
  extra?: Extra;
  sampleWeight?: (e: SourcedExample) => number;
  /** Products of every pair of standardised features, with this L2. */
  quadraticL2?: number;
  /** Decision tuning allows this share of the TF-IDF model's out-of-fold NEI -> Supports share (default 1). */
  allowedScale?: number;
  /** Weight of NEI -> Supports beyond the allowance in the decision objective (default 2, as shipped). */
  penalty?: number;
}

export const bench: Bench = async () => {
  const { train, dev } = await loadVerificationData();
  const cfTrain = train.flatMap((e, i) => (e.source === "climate-fever" ? [i] : []));
  const cfDev = dev.flatMap((e, i) => (e.source === "climate-fever" ? [i] : []));

  const memo = profileMemo();
  const profileOf = memo.of;
  for (const e of train) for (const t of [e.claim, ...e.sentences]) profileOf(t);
  const idf = IdfTable.fit(memo.profiles());
  const cuesOf = (e: SourcedExample) =>
    pairCues(profileOf(e.claim), e.sentences.map(profileOf), e.title ? profile(e.title) : undefined, idf);
  const cues = { train: train.map(cuesOf), dev: dev.map(cuesOf) };

  // Pair-level TF-IDF model as shipped, and variants of it.
  const vectorizer = fitPairVectorizer(train);
  const sharedTerms = (e: SourcedExample): SparseVector => {
    const c = vectorizer.transform(e.claim);
    const a = vectorizer.transform(`${e.title ?? ""} ${e.sentences.join(" ")}`);
    const inAbstract = new Map<number, number>();
    for (let k = 0; k < a.indices.length; k++) inAbstract.set(a.indices[k], a.values[k]);
    const indices: number[] = [];
    const values: number[] = [];
    for (let k = 0; k < c.indices.length; k++) {
      const w = inAbstract.get(c.indices[k]);
      if (w === undefined) continue;
      indices.push(c.indices[k]);
      values.push(Math.sqrt(c.values[k] * w));
    }
    return { indices: Int32Array.from(indices), values: Float32Array.from(values) };
  };
  const stackTfidf = (name: string, withShared: boolean, l2: number): Stacked => {
    log(`TF-IDF model: ${name}`);
    const dim = pairTfidfDim(vectorizer) + (withShared ? vectorizer.dim : 0);
    const features = (e: SourcedExample) => {
      const base = pairTfidfFeatures(vectorizer, e);
      if (!withShared) return base;
      return concatSparse([
        { vector: base, width: pairTfidfDim(vectorizer) },
        { vector: sharedTerms(e), width: vectorizer.dim },
      ]);
    };
    const X = train.map(features);
    const y = train.map(labelIndex);
    const oof: Float32Array[] = new Array(train.length);
    for (const split of claimFolds(
      train.map((e) => e.claimId),
      FOLDS,
    )) {
      const m = fitTfidfPairLR(
        split.fit.map((i) => X[i]),
        split.fit.map((i) => y[i]),
        dim,
        l2,
      );
      for (const i of split.held) oof[i] = m.predictProba(X[i]);
    }
    const final = fitTfidfPairLR(X, y, dim, l2);
    return { train: oof, dev: dev.map((e) => final.predictProba(features(e))) };
  };
  const shipped = stackTfidf("as shipped", false, 1e-4);

  /** The one-sentence pair model of train.ts with a variant's changes; Climate-FEVER figures. */
  const evaluate = (v: Variant, trainRows = cfTrain, devRows = cfDev) => {
    const tf = v.tfidf ?? shipped;
    const raw = (e: SourcedExample, i: number, isDev: boolean) => {
      const c = isDev ? cues.dev[i] : cues.train[i];
      const x = pairFeatures([], DEFAULT_PAIR_GROUPS, {
        candidates: [{ index: 0, selector: 1 }],
        lexical: c.lexical,
        tfidf: isDev ? tf.dev[i] : tf.train[i],
        idf: c.idf,
      });
      return [...x, ...(v.extra?.(e, i, isDev) ?? [])];
    };
    const rawTrain = trainRows.map((i) => raw(train[i], i, false));
    const standardiser = fitStandardiser(rawTrain);
    const expand = (x: number[]) => {
      const z = standardise(x, standardiser);
      if (v.quadraticL2 === undefined) return z;
      const out = Array.from(z);
      for (let a = 0; a < z.length; a++) for (let b = a; b < z.length; b++) out.push(z[a] * z[b]);
      return Float32Array.from(out);
    };
    const X = rawTrain.map(expand);
    const Xdev = devRows.map((i) => expand(raw(dev[i], i, true)));
    const y = trainRows.map((i) => labelIndex(train[i]));
    const weights = v.sampleWeight && trainRows.map((i) => v.sampleWeight?.(train[i]) ?? 1);
    const fit = (rows: number[]) => {
      const m = trainLogistic(
        rows.map((r) => X[r]),
        rows.map((r) => y[r]),
        X[0].length,
        {
          kind: "multinomial",
          classes: 3,
          l2: v.quadraticL2 ?? 0.1,
          maxIter: 300,
          sampleWeights: weights && rows.map((r) => weights[r]),
        },
      );
      return (x: Float32Array) => m.decision(x);
    };
    const oof: Float32Array[] = new Array(trainRows.length);
    for (const split of claimFolds(
      trainRows.map((i) => train[i].claimId),
      FOLDS,
    )) {
      const m = fit(split.fit);
      for (const r of split.held) oof[r] = m(X[r]);
    }
    const temperature = fitTemperature(oof, y);
    const calibrated = oof.map((l) => softmaxWithTemperature(l, temperature));
    const gold = trainRows.map((i) => train[i].label);
    const classWeights = tuneDecision(
      calibrated,
      gold,
      trainRows.map((i) => tf.train[i]),
      { penalty: v.penalty ?? 2, refutesBonus: 0.25, allowedScale: v.allowedScale },
    );
    const decide = (p: number[]) => LABELS[weightedArgmax(p, classWeights)];
    const final = fit(trainRows.map((_, r) => r));
    const pred = Xdev.map((x) => decide(softmaxWithTemperature(final(x), temperature)));
    const devGold = devRows.map((i) => dev[i].label);
    return {
      oof: verificationF1(calibrated.map(decide), gold).weighted,
      oofNeiAsSupports: neiAsSupportsShare(gold, calibrated.map(decide)),
      dev: verificationF1(pred, devGold),
      neiAsSupports: neiAsSupportsShare(devGold, pred),
      pred,
    };
  };

  // Inputs of the variants.
  const fever = await readClimateFever(trainingFiles().climateFever);
  // Keyed by claim too: one sentence is evidence for several claims, with other votes each time.
  const agreement = new Map(
    fever.flatMap((c) => c.evidences.map((e) => [`cf:${c.id}|cf:${e.id}`, e.agreement])),
  );
  const claimLabel = new Map(fever.map((c) => [`cf:${c.id}`, c.claimLabel]));

  const siblingsOf = (list: readonly SourcedExample[], probs: readonly Float32Array[]) => {
    const byClaim = new Map<string, number[]>();
    list.forEach((e, i) => {
      byClaim.set(e.claimId, [...(byClaim.get(e.claimId) ?? []), i]);
    });
    return (i: number) => {
      const others = (byClaim.get(list[i].claimId) ?? []).filter((j) => j !== i);
      if (!others.length) return [0, 0, 0, 0];
      const mean = (k: number) => others.reduce((s, j) => s + logOdds(probs[j], k), 0) / others.length;
      const max = (k: number) => Math.max(...others.map((j) => logOdds(probs[j], k)));
      return [mean(0), mean(1), max(0), max(1)];
    };
  };
  const siblings = { train: siblingsOf(train, shipped.train), dev: siblingsOf(dev, shipped.dev) };

  log("narratives model on the claims");
  const narratives = await NarrativeClassifier.load("models/narratives/fast.json");
  const claims = [...new Set([...train, ...dev].map((e) => e.claim))];
  const contrarian = new Map(
    (await narratives.classify(claims)).map((p, i) => [claims[i], 1 - (p.probabilities["0_0"] ?? 0)]),
  );

  // A claim-veracity prior: TF-IDF LR of the Climate-FEVER claim label from the claim, out of fold.
  const CLAIM_LABELS = ["SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO", "DISPUTED"] as const;
  const trainClaims = [...new Map(cfTrain.map((i) => [train[i].claimId, train[i].claim])).entries()];
  const claimVectorizer = TfidfVectorizer.fit(
    trainClaims.map(([, c]) => c),
    { analyzer: "word", ngram: [1, 2], minDf: 2, sublinearTf: true },
  );
  const claimX = trainClaims.map(([, c]) => claimVectorizer.transform(c));
  const claimY = trainClaims.map(([id]) =>
    CLAIM_LABELS.indexOf(claimLabel.get(id) as (typeof CLAIM_LABELS)[number]),
  );
  const fitClaim = (rows: number[]) =>
    trainLogistic(
      rows.map((r) => claimX[r]),
      rows.map((r) => claimY[r]),
      claimVectorizer.dim,
      { kind: "multinomial", classes: 4, l2: 1e-2 },
    );
  const claimPrior = new Map<string, Float32Array>();
  for (const split of claimFolds(
    trainClaims.map(([id]) => id),
    FOLDS,
  )) {
    const m = fitClaim(split.fit);
    for (const r of split.held) claimPrior.set(trainClaims[r][0], m.predictProba(claimX[r]));
  }
  const finalClaim = fitClaim(trainClaims.map((_, r) => r));
  const priorFeatures = (p: Float32Array, best: number) => [
    Math.log(p[0] / p[2]),
    Math.log(p[1] / p[2]),
    Math.log(p[0] / p[2]) * best,
    Math.log(p[1] / p[2]) * best,
  ];

  // Pair nearest neighbours in USE-lite space: train pairs whose claim and sentence are both close.
  log("USE-lite vectors of the Climate-FEVER claims and sentences");
  const encoder = await openUseLite({ workers: 2 });
  const texts = [
    ...new Set(
      [...cfTrain.map((i) => train[i]), ...cfDev.map((i) => dev[i])].flatMap((e) => [
        e.claim,
        e.sentences[0],
      ]),
    ),
  ];
  const vectors = await encoder.embed(texts);
  await encoder.close();
  const vectorOf = new Map(texts.map((t, i) => [t, vectors[i]]));
  const K = 30;
  const neighbours = (e: SourcedExample, pool: readonly number[]) => {
    const u = vectorOf.get(e.claim) as Float32Array;
    const s = vectorOf.get(e.sentences[0]) as Float32Array;
    const scored = pool
      .filter((j) => train[j].claimId !== e.claimId)
      .map((j) => ({
        w:
          Math.max(0, cosine(u, vectorOf.get(train[j].claim) as Float32Array)) *
          Math.max(0, cosine(s, vectorOf.get(train[j].sentences[0]) as Float32Array)),
        y: labelIndex(train[j]),
      }))
      .sort((a, b) => b.w - a.w)
      .slice(0, K);
    const total = scored.reduce((t, x) => t + x.w, 0);
    const p = [0, 1, 2].map(
      (c) => (scored.reduce((t, x) => t + (x.y === c ? x.w : 0), 0) + 0.1) / (total + 0.3),
    );
    return [logOdds(p, 0), logOdds(p, 1), scored[0]?.w ?? 0, cosine(u, s)];
  };
  const neighbourCache = new Map<number, number[]>();

  const variants: Variant[] = [
    { name: "shipped one-sentence pair model" },
    {
      name: "training pairs weighted by annotator agreement",
      sampleWeight: (e) => agreement.get(`${e.claimId}|${e.abstractId}`) ?? 1,
    },
    { name: "all pairwise feature products (L2 1)", quadraticL2: 1 },
    { name: "TF-IDF model with a shared-terms block", tfidf: stackTfidf("shared-terms block", true, 1e-4) },
    { name: "TF-IDF model less regularised (L2 3e-5)", tfidf: stackTfidf("L2 3e-5", false, 3e-5) },
    {
      name: "context: TF-IDF stance of the claim's other pairs",
      extra: (_e, i, isDev) => (isDev ? siblings.dev(i) : siblings.train(i)),
    },
    {
      name: "narratives model: P(contrarian claim) x relevance",
      extra: (e, i, isDev) => {
        const k = contrarian.get(e.claim) ?? 0;
        const p = isDev ? shipped.dev[i] : shipped.train[i];
        const best = (isDev ? cues.dev[i] : cues.train[i]).idf?.[0] ?? 0;
        return [k, k * logOdds(p, 0), k * logOdds(p, 1), k * best, (1 - k) * best];
      },
    },
    {
      name: "claim-veracity prior (Climate-FEVER claim labels)",
      extra: (e, i, isDev) => {
        const best = (isDev ? cues.dev[i] : cues.train[i]).idf?.[0] ?? 0;
        const p = isDev
          ? finalClaim.predictProba(claimVectorizer.transform(e.claim))
          : claimPrior.get(e.claimId);
        return p ? priorFeatures(p, best) : [0, 0, 0, 0];
      },
    },
    {
      name: `USE-lite pair neighbours (k ${K})`,
      extra: (e, i, isDev) => {
        if (isDev) return neighbours(e, cfTrain);
        let x = neighbourCache.get(i);
        if (!x) {
          x = neighbours(
            e,
            cfTrain.filter((j) => foldOf(train[j].claimId, FOLDS) !== foldOf(e.claimId, FOLDS)),
          );
          neighbourCache.set(i, x);
        }
        return x;
      },
    },
  ];

  // Paired bootstrap over dev claims: the 95% interval of a variant's dev difference from the shipped model.
  const devGold = cfDev.map((i) => dev[i].label as Label);
  const devClaims = [...new Set(cfDev.map((i) => dev[i].claimId))];
  const samples = groupResamples(cfDev.map((i) => dev[i].claimId));
  const interval = (pred: readonly Label[], ref: readonly Label[]) =>
    bootstrapInterval(samples, (rows) => {
      const gold = rows.map((r) => devGold[r]);
      return (
        verificationF1(
          rows.map((r) => pred[r]),
          gold,
        ).weighted -
        verificationF1(
          rows.map((r) => ref[r]),
          gold,
        ).weighted
      );
    });

  const f3 = (x: number) => x.toFixed(3);
  const delta = (a: number, b: number) => `${a - b >= 0 ? "+" : ""}${(a - b).toFixed(3)}`;
  const rows: (string | number)[][] = [];
  const clearDev: string[] = [];
  let largestGain = Number.NEGATIVE_INFINITY;
  let reference: ReturnType<typeof evaluate> | undefined;
  for (const v of variants) {
    log(v.name);
    const r = evaluate(v);
    reference ??= r;
    const ci = interval(r.pred, reference.pred);
    if (r !== reference) {
      const gain = Math.max(r.oof - reference.oof, r.dev.weighted - reference.dev.weighted);
      if (ci[0] > 0 || ci[1] < 0) clearDev.push(v.name);
      largestGain = Math.max(largestGain, gain);
    }
    rows.push([
      v.name,
      `${f3(r.oof)} (${delta(r.oof, reference.oof)})`,
      `${f3(r.dev.weighted)} (${delta(r.dev.weighted, reference.dev.weighted)})`,
      r === reference ? "-" : ci.map((x) => delta(x, 0)).join(" to "),
      f3(r.dev.supports),
      f3(r.dev.refutes),
      f3(r.neiAsSupports),
    ]);
  }
  const baselinePred = cfDev.map((i) => LABELS[weightedArgmax(shipped.dev[i], [1, 1, 1])]);
  const baselineDev = verificationF1(baselinePred, devGold);
  const [shippedLow, shippedHigh] = interval(reference?.pred ?? [], baselinePred);
  const baselineOof = verificationF1(
    cfTrain.map((i) => LABELS[weightedArgmax(shipped.train[i], [1, 1, 1])]),
    cfTrain.map((i) => train[i].label as Label),
  );

  // SciFact: the one side condition not met is "gold NEI called Supports" below the baseline's share. A stricter
  // decision rule, tuned out of fold like the shipped one, with a smaller allowance.
  const sfTrain = train.flatMap((e, i) => (e.source === "scifact" ? [i] : []));
  const sfDev = dev.flatMap((e, i) => (e.source === "scifact" ? [i] : []));
  const sfGold = sfDev.map((i) => dev[i].label);
  const sfNei = sfGold.filter((l) => l === LABELS[2]).length;
  const count = (share: number) => `${f3(share)} (${Math.round(share * sfNei)} of ${sfNei})`;
  const sfBaseline = sfDev.map((i) => LABELS[weightedArgmax(shipped.dev[i], [1, 1, 1])]);
  const sfRows: (string | number)[][] = [
    [
      "TF-IDF + LR alone (the baseline's model)",
      "-",
      f3(verificationF1(sfBaseline, sfGold).weighted),
      count(neiAsSupportsShare(sfGold, sfBaseline)),
    ],
  ];
  const sfCounts: number[] = [];
  const sfF1: number[] = [];
  for (const [allowedScale, penalty] of [
    [1, 2],
    [0.75, 2],
    [0.5, 10],
    [0, 10],
  ]) {
    log(`SciFact, NEI -> Supports allowance ${allowedScale}, penalty ${penalty}`);
    const r = evaluate({ name: "", allowedScale, penalty }, sfTrain, sfDev);
    sfCounts.push(Math.round(r.neiAsSupports * sfNei));
    sfF1.push(r.dev.weighted);
    sfRows.push([
      allowedScale === 1
        ? "shipped: allowance 1 ×, penalty 2"
        : `allowance ${allowedScale} ×, penalty ${penalty}`,
      `${f3(r.oof)}, ${f3(r.oofNeiAsSupports)}`,
      f3(r.dev.weighted),
      count(r.neiAsSupports),
    ]);
  }
  const baselineCount = Math.round(neiAsSupportsShare(sfGold, sfBaseline) * sfNei);
  const fewest = Math.min(...sfCounts.slice(1));
  const f1AtFewest = sfF1[sfCounts.indexOf(fewest, 1)];
  const sfTarget = verificationF1(sfBaseline, sfGold).weighted + 0.08;
  const bothMet = sfRows
    .slice(1)
    .filter((_, k) => sfF1[k] >= sfTarget && sfCounts[k] < baselineCount)
    .map((r) => String(r[0]));

  return {
    id: "verification-tried",
    title:
      "Claim verification: what was tried beyond the shipped model (Climate-FEVER, and NEI called Supports on SciFact)",
    command: "npm run bench -- verification-tried",
    markdown: `
Climate-FEVER pairs only (${cfTrain.length} train, ${cfDev.length} dev), one-sentence pair model of the built-in
verifier (same inputs, folds, temperature and decision tuning as \`climatecheck-train verification\`), with one
change per row. "Out of fold" is 5-fold weighted F1 on the train split, the figure a choice may rest on; "dev" is
the dev split. The TF-IDF + LR model alone (the benchmark baseline's model) has ${f3(baselineOof.weighted)} out of
fold and ${f3(baselineDev.weighted)} on dev, so the issue's target (+0.06) is ${f3(baselineDev.weighted + 0.06)} on dev. The shipped
model's dev lead over it has the 95% interval ${f3(shippedLow)} to ${f3(shippedHigh)} (paired bootstrap over the
${devClaims.length} dev claims, 1,000 resamples, as in the column below).

${table(["change", "out-of-fold weighted F1", "dev weighted F1", "95% interval of the dev difference", "dev Supports F1", "dev Refutes F1", "dev gold NEI → Supports"], rows)}

The largest gain of any change, out of fold or on dev, is ${delta(largestGain, 0)}; ${
      clearDev.length
        ? `the dev interval excludes zero for: ${clearDev.join("; ")}`
        : "every dev interval spans zero"
    }. None is shipped: the target needs ${delta(baselineDev.weighted + 0.06 - (reference?.dev.weighted ?? 0), 0)} more
on dev than the shipped model has, and the USE-lite row would also cost a sentence encoding per pair. Reading of
the errors: Climate-FEVER labels hinge on meaning (a claim that "the 97% consensus figure was flawed" against a
sentence that reports 97.1%), which needs a pretrained natural-language-inference model; the \`onnx\` backend
takes one from a local folder.

SciFact: the share of gold NEI pairs called Supports under stricter decision rules, each tuned out of fold like
the shipped one (weighted F1 + 0.25 × Refutes F1, minus a penalty per point of NEI pairs called Supports beyond an
allowance, a multiple of the TF-IDF model's own out-of-fold share).

${table(["decision rule", "out of fold: weighted F1, NEI → Supports", "dev weighted F1", "dev gold NEI → Supports"], sfRows)}

The stricter rules lower the out-of-fold share; on dev the fewest NEI pairs called Supports is ${fewest} (the
baseline: ${baselineCount}), at weighted F1 ${f3(f1AtFewest)} against ${f3(sfF1[0])} for the shipped rule. ${
      bothMet.length
        ? `Rules that meet both SciFact conditions (weighted F1 at least ${f3(sfTarget)}, fewer than ${baselineCount}): ${bothMet.join("; ")}.`
        : `No rule meets both SciFact conditions on dev (weighted F1 at least ${f3(sfTarget)} and fewer than ${baselineCount}), so the shipped rule keeps the one chosen out of fold.`
    } Of the shipped rule's ${sfCounts[0]}, some are gaps in the gold labels rather than errors: for "CCL19 is a ligand for
CCR7" the abstract speaks of "the CCR7 ligand CCL19", and for "CRP is positively correlated with postoperative
mortality following CABG" it reports that preoperative CRP predicts mortality after bypass grafting.
`,
  };
};
