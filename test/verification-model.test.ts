import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { SentenceEncoder } from "../src/encoders/sentence-encoder.ts";
import { tuneDecisionWeights, weightedArgmax } from "../src/learning/decision-weights.ts";
import { claimFolds } from "../src/learning/split.ts";
import { contentTokens } from "../src/text/tokenize.ts";
import { NEI } from "../src/types.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import type { SourcedExample } from "../src/verification/examples.ts";
import { aggregateFeatures, pairDim, pairFeatures } from "../src/verification/features.ts";
import { DEV_SIDE, stanceRowSides } from "../src/verification/fit-claim-narrative.ts";
import { IDF_FEATURES, IdfTable, idfPairFeatures } from "../src/verification/idf.ts";
import { LEXICAL_NAMES, lexicalFeatures, profile } from "../src/verification/lexical.ts";
import { rationaleFor, VerificationModel } from "../src/verification/model.ts";
import {
  dropLeaks,
  foldGroups,
  summarise,
  trainVerificationModel,
  tuneDecision,
} from "../src/verification/train.ts";
import { abstractSentences, agreesWithProbs, decide } from "../src/verification/verifier.ts";

/** A stand-in sentence encoder: hashed bag of content tokens, unit length (deterministic, no model files). */
function hashVector(text: string, dim = 32): Float32Array {
  const v = new Float32Array(dim);
  for (const t of contentTokens(text)) {
    let h = 2166136261;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 16777619);
    v[(h >>> 0) % dim] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
const fakeEncoder: SentenceEncoder = {
  name: "fake@1",
  dim: 32,
  embed: async (texts) => texts.map((t) => hashVector(t)),
  close: async () => {},
};

const lex = (claim: string, sentence: string) => {
  const x = lexicalFeatures(profile(claim), profile(sentence), 0, 1);
  return (name: string) => x[LEXICAL_NAMES.indexOf(name)];
};

test("abstractSentences keeps given boundaries and splits structured abstracts at their headings", () => {
  assert.deepEqual(abstractSentences({ abstract: "ignored", sentences: ["One.", "Two."] }), ["One.", "Two."]);
  const structured =
    "BACKGROUND: Arctic sea ice has declined since 1979 (ca. 13% per decade). METHODS: We used passive microwave data from e.g. NSIDC. RESULTS: Summer extent fell 2.5 times faster after 2000. CONCLUSIONS: Ice loss is accelerating.";
  assert.deepEqual(abstractSentences({ abstract: structured }), [
    "BACKGROUND: Arctic sea ice has declined since 1979 (ca. 13% per decade).",
    "METHODS: We used passive microwave data from e.g. NSIDC.",
    "RESULTS: Summer extent fell 2.5 times faster after 2000.",
    "CONCLUSIONS: Ice loss is accelerating.",
  ]);
  const plain =
    "Global mean sea level rose by 3.3 mm per year. The rate has increased since 1993 (Church et al. 2011). Thermal expansion explains about 40%.";
  assert.equal(abstractSentences({ abstract: plain }).length, 3);
});

test("lexical features see overlap, negation, null results, direction, antonyms and numbers", () => {
  const claim = "Sea ice extent increases in the Arctic by 13%";
  assert.equal(lex(claim, "Arctic sea ice extent increased by 13%")("recall"), 1);
  assert.equal(lex(claim, "Arctic sea ice extent increased by 13%")("num_recall"), 1);
  assert.equal(lex(claim, "Arctic sea ice extent decreased by 13%")("dir_disagree"), 1);
  assert.equal(lex(claim, "Arctic sea ice extent decreased by 13%")("antonym"), 0, "stem-level antonym only");
  assert.equal(lex("Warming increases ice loss", "Warming decreases ice loss")("antonym"), 1);
  assert.equal(lex(claim, "Sea ice extent did not change in the Arctic")("neg_mismatch"), 1);
  assert.equal(lex(claim, "There was no significant difference in sea ice")("sent_null"), 1);
  assert.equal(lex(claim, "Arctic sea ice extent increased by 20%")("num_mismatch"), 1);
  assert.equal(lex(claim, "Ice may possibly grow")("sent_hedge"), 1);
});

test("decide folds weak Supports/Refutes into NEI, so the label is always the top class shown", () => {
  const p = (supports: number, refutes: number, nei: number) => ({ supports, refutes, nei });
  assert.deepEqual(decide(p(0.5, 0.2, 0.3)), { label: "Supports", confidence: 0.5, probs: p(0.5, 0.2, 0.3) });
  // Supports 0.5 is below 0.6: its mass moves to NEI, which then is the most probable class.
  assert.deepEqual(decide(p(0.5, 0.2, 0.3), 0.6), { label: NEI, confidence: 0.8, probs: p(0, 0.2, 0.8) });
  assert.deepEqual(decide(p(0.1, 0.7, 0.2), 0.6), {
    label: "Refutes",
    confidence: 0.7,
    probs: p(0.1, 0.7, 0.2),
  });
  assert.deepEqual(decide(p(0.2, 0.2, 0.6), 0.9), { label: NEI, confidence: 0.6, probs: p(0.2, 0.2, 0.6) });
  for (const min of [0, 0.3, 0.6, 0.9])
    for (const q of [p(0.45, 0.35, 0.2), p(0.34, 0.33, 0.33), p(0.1, 0.3, 0.6)])
      assert.ok(agreesWithProbs(decide(q, min)), `${JSON.stringify(q)} at ${min}`);
  assert.equal(agreesWithProbs({ label: "Refutes", confidence: 0.22, probs: p(0.53, 0.22, 0.25) }), false);
});

test("rationale: the least-NEI candidate plus those preferring the label; none for NEI", () => {
  const c = [
    { index: 4, selector: 0.9, stance: [0.2, 0.1, 0.7] },
    { index: 1, selector: 0.5, stance: [0.6, 0.1, 0.3] },
    { index: 2, selector: 0.4, stance: [0.45, 0.1, 0.45] },
  ];
  assert.deepEqual(rationaleFor("Supports", c), [1]);
  assert.deepEqual(rationaleFor("Refutes", c), [1]);
  assert.deepEqual(rationaleFor(NEI, c), []);
});

/** Synthetic pairs: Supports repeats the claim, Refutes negates it, NEI talks about something else. */
function synthetic(n: number, prefix: string): SourcedExample[] {
  const subjects = ["ice", "rain", "drought", "coral", "forest", "wind", "snow", "soil", "ocean", "glacier"];
  const verbs = ["increases", "reduces", "harms", "protects", "shifts"];
  const objects = ["yield", "biodiversity", "runoff", "heat", "carbon", "salinity", "erosion"];
  const out: SourcedExample[] = [];
  for (let i = 0; i < n; i++) {
    const s = subjects[i % subjects.length];
    const v = verbs[(i * 3) % verbs.length];
    const o = objects[(i * 5) % objects.length];
    const claim = `${s} ${v} ${o} in region ${i % 4}`;
    const filler = `Samples of ${objects[(i + 2) % objects.length]} were collected in ${2000 + (i % 20)}.`;
    const kind = i % 3;
    const evidence =
      kind === 0
        ? `We show that ${s} ${v} ${o} in region ${i % 4}.`
        : kind === 1
          ? `We show that ${s} does not ${v.replace(/s$/, "")} ${o}; no significant effect was found.`
          : `The ${subjects[(i + 5) % subjects.length]} record was digitised.`;
    const sentences = i % 2 ? [filler, evidence] : [evidence, filler];
    const at = sentences.indexOf(evidence);
    const label = kind === 0 ? "Supports" : kind === 1 ? "Refutes" : NEI;
    out.push({
      source: i % 4 ? "scifact" : "climate-fever",
      claimId: `${prefix}${i}`,
      claim,
      abstractId: `a${i}`,
      sentences: i % 4 ? sentences : [evidence],
      label,
      rationale: label === NEI ? [] : [i % 4 ? at : 0],
    });
  }
  return out;
}

test("the trained verifier learns the synthetic task, calibrates and points at the evidence sentence", async () => {
  const train = synthetic(240, "t");
  const dev = synthetic(60, "d");
  const { model, calibration } = await trainVerificationModel(train, {
    embed: fakeEncoder.embed,
    encoderName: fakeEncoder.name,
    candidates: 2,
    folds: 3,
  });
  assert.ok(calibration.temperature.single > 0 && calibration.temperature.multi > 0);
  assert.ok(calibration.eceAfter <= calibration.eceBefore + 1e-6, JSON.stringify(calibration));
  assert.ok(calibration.selectorRecall > 0.9);
  const dir = await mkdtemp(join(tmpdir(), "verification-"));
  try {
    const path = join(dir, "model.json");
    await writeFile(path, JSON.stringify(model));
    const verifier = await openBuiltinVerifier({ modelPath: path, encoder: fakeEncoder });
    const verdicts = await verifier.verifyPairs(
      dev.map((e) => ({ claim: e.claim, abstract: "", sentences: e.sentences })),
    );
    const { scores } = summarise(dev, verdicts);
    assert.ok(scores.f1_weighted > 0.9, `dev weighted F1 ${scores.f1_weighted}`);
    for (const [i, v] of verdicts.entries()) {
      assert.ok(Math.abs(v.probs.supports + v.probs.refutes + v.probs.nei - 1) < 1e-5);
      if (v.label !== NEI && v.label === dev[i].label) assert.ok(v.rationale.includes(dev[i].rationale[0]));
      if (v.label === NEI) assert.deepEqual(v.rationale, []);
    }
    const one = await verifier.verify(dev[0].claim, { abstract: dev[0].sentences.join(" ") });
    assert.equal(one.label, verdicts[0].label);
    await verifier.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("decision weights: weighted argmax, and tuning finds the weights the objective asks for", () => {
  assert.equal(weightedArgmax([0.3, 0.2, 0.5], [1, 1, 1]), 2);
  assert.equal(weightedArgmax([0.3, 0.2, 0.5], [1, 3, 1]), 1);
  // Gold is class 1 whenever p1 > 0.2: only an up-weighted class 1 gets those right.
  const probs = [
    [0.1, 0.3, 0.6],
    [0.2, 0.25, 0.55],
    [0.1, 0.1, 0.8],
    [0.6, 0.1, 0.3],
  ];
  const gold = [1, 1, 2, 0];
  const accuracy = (d: number[]) => d.filter((k, i) => k === gold[i]).length;
  const { weights, objective } = tuneDecisionWeights(probs, accuracy, 3);
  assert.equal(objective, 4);
  assert.ok(weights[1] > 2 && weights[2] === 1, String(weights));
});

test("decision tuning allows NEI called Supports only up to the TF-IDF model's share, or a stricter multiple", () => {
  // Up-weighting Supports wins three Supports pairs (weighted F1 0.817 against 0.639) at the cost of one NEI pair.
  const probs = [
    [0.45, 0.05, 0.5],
    [0.6, 0.05, 0.35],
    [0.46, 0.04, 0.5],
    [0.1, 0.1, 0.8],
    [0.1, 0.6, 0.3],
    [0.47, 0.03, 0.5],
  ];
  const gold = ["Supports", "Supports", NEI, NEI, "Refutes", "Supports"] as const;
  // The TF-IDF model calls that same NEI pair Supports: a share of 1/2 is allowed.
  const tfidf = [probs[1], probs[1], probs[1], probs[3], probs[4], probs[1]];
  const nei = (w: number[]) => probs.filter((p, i) => gold[i] === NEI && weightedArgmax(p, w) === 0).length;
  const loose = tuneDecision(probs, gold, tfidf, { penalty: 2, refutesBonus: 0.25 });
  assert.equal(nei(loose), 1, String(loose));
  assert.equal(weightedArgmax(probs[5], loose), 0);
  const strict = tuneDecision(probs, gold, tfidf, { penalty: 2, refutesBonus: 0.25, allowedScale: 0 });
  assert.equal(nei(strict), 0, String(strict));
});

test("dropLeaks removes train pairs whose claim text repeats a dev claim, whatever its id", () => {
  const pair = (claimId: string, claim: string) => ({ claimId, claim });
  const { train, dev } = dropLeaks({
    train: [pair("a", "Sea ice is melting."), pair("b", "CO2 is plant food")],
    dev: [pair("c", "sea ice is  MELTING")],
  });
  assert.deepEqual(
    train.map((e) => e.claimId),
    ["b"],
  );
  assert.equal(dev.length, 1);
});

test("aggregate features see cues in sentences the selector may not keep", () => {
  const claim = profile("Warming increases ice loss");
  const sentences = ["Warming increases ice loss in models.", "Observations: warming decreases ice loss."];
  const agg = aggregateFeatures(sentences.map((s, i) => lexicalFeatures(claim, profile(s), i, 2)));
  assert.equal(agg[0], 1, "best overlap");
  assert.equal(agg[4], 1, "an antonym somewhere");
});

test("the shipped groups never call the encoder; the stance ablation encodes each distinct text once", async () => {
  const train = synthetic(120, "t");
  let calls = 0;
  let texts = 0;
  const embed = async (t: string[]) => {
    calls++;
    texts += t.length;
    return fakeEncoder.embed(t);
  };
  const trained = await trainVerificationModel(train, { embed, encoderName: fakeEncoder.name, folds: 2 });
  assert.equal(calls, 0, "no stance model unless asked for");
  assert.equal(trained.model.encoder, undefined);
  const m = new VerificationModel(trained.model);
  assert.equal(m.usesEncoder, false);
  const outs = await m.score([m.prepare(train[0].claim, train[0].sentences)], embed);
  assert.equal(calls, 0);
  assert.equal(outs.length, 1);
  assert.ok(JSON.stringify(trained.model).length < 5e6);

  const withStance = await trainVerificationModel(train, {
    stance: true,
    embed,
    encoderName: fakeEncoder.name,
    folds: 2,
  });
  const stanceModel = new VerificationModel(withStance.refit(["stance", "aggregate", "tfidf", "idf"]).model);
  assert.equal(stanceModel.json.encoder, fakeEncoder.name);
  calls = 0;
  texts = 0;
  const pairs = [train[0], train[0], train[1]].map((e) => stanceModel.prepare(e.claim, e.sentences));
  const scored = await stanceModel.score(pairs, embed);
  assert.equal(calls, 1, "one encoder call per batch");
  const distinct = new Set(
    [train[0], train[1]].flatMap((e, i) => [
      e.claim,
      ...pairs[i === 0 ? 0 : 2].candidates.map((c) => e.sentences[c.index]),
    ]),
  );
  assert.equal(texts, distinct.size);
  for (const o of scored) for (const c of o.candidates) assert.equal(c.stance?.length, 3);
  assert.throws(() => trained.refit(["stance"]), /stance: true/);
});

test("one-sentence and longer abstracts go through their own pair model, temperature and decision", async () => {
  const train = synthetic(120, "t");
  const { model } = await trainVerificationModel(train, { folds: 2 });
  const forceRefutes = new VerificationModel({
    ...model,
    pairs: { ...model.pairs, single: { ...model.pairs.single, classWeights: [0, 1, 0] } },
  });
  const plain = new VerificationModel(model);
  const noEncoder = async (): Promise<Float32Array[]> => {
    throw new Error("no encoder");
  };
  const verdicts = async (m: VerificationModel, sentences: string[][]) =>
    (
      await m.score(
        sentences.map((s) => m.prepare("coral reduces heat in region 1", s)),
        noEncoder,
      )
    ).map((o) => m.verdict(o));
  const single = [["We show that coral reduces heat in region 1."]];
  const multi = [["We show that coral reduces heat in region 1.", "Samples were collected in 2003."]];
  assert.deepEqual(
    (await verdicts(forceRefutes, single)).map((v) => v.label),
    ["Refutes"],
  );
  assert.deepEqual(
    (await verdicts(forceRefutes, multi)).map((v) => v.label),
    (await verdicts(plain, multi)).map((v) => v.label),
  );
  assert.throws(
    () => new VerificationModel({ ...model, format: "climatecheck-verification/2" as never }),
    /format/,
  );
});

test("rarity-weighted overlap: a shared rare key counts more than a shared common one", () => {
  const common = Array.from({ length: 50 }, (_, i) => profile(`the effect of warming on region ${i}`));
  const idf = IdfTable.fit([...common, profile("ALDH1 expression in tumours"), profile("ALDH1 staining")]);
  const claim = profile("ALDH1 warming effect");
  const rare = profile("ALDH1 was measured");
  const commonOnly = profile("warming had an effect");
  const lexicalOf = (sentences: ReturnType<typeof profile>[]) =>
    sentences.map((s, i) => lexicalFeatures(claim, s, i, sentences.length));
  const f = (sentences: ReturnType<typeof profile>[]) =>
    idfPairFeatures(idf, claim, sentences, lexicalOf(sentences));
  const best = IDF_FEATURES.indexOf("best");
  const missing = IDF_FEATURES.indexOf("max_missing");
  assert.ok(f([rare])[best] > f([commonOnly])[best], "the rare key weighs more");
  assert.ok(f([commonOnly])[missing] > 0, "the abstract lacks the rare key");
  assert.equal(f([rare, commonOnly])[missing], 0);
  assert.equal(f([rare, commonOnly])[IDF_FEATURES.indexOf("abstract")], 1);
  assert.ok(idf.weight("aldh1") > idf.weight("warmin"));
});

test("narrative groups: the claim's P(narrative) and its products reach the pair model, read at inference", async () => {
  const x = pairFeatures([], ["tfidf", "narrative", "narrative-x"], {
    candidates: [{ index: 0, selector: 1 }],
    lexical: [[]],
    tfidf: [0.5, 0.25, 0.25],
    narrative: 0.8,
  });
  assert.equal(x.length, pairDim([], ["tfidf", "narrative", "narrative-x"]));
  assert.equal(x.length, 11);
  assert.ok(Math.abs(x[5] - 0.8) < 1e-6 && Math.abs(x[6 + 2] - 0.8 * 0.5) < 1e-6);
  assert.throws(
    () => pairFeatures([], ["narrative"], { candidates: [{ index: 0, selector: 1 }], lexical: [[]] }),
    /P\(narrative\)/,
  );

  const train = synthetic(120, "n");
  // A P(narrative) that tells Refutes apart (in training, as the out-of-fold values would).
  const q = train.map((e) => (e.label === "Refutes" ? 0.9 : 0.1));
  const gate = { model: "none", features: "", gate: {} as never, platt: { a: 1, b: 0 }, heldOut: 0 };
  const trained = await trainVerificationModel(train, { folds: 2, claimNarrative: q, narrativeGate: gate });
  const { model } = trained.refit(["aggregate", "tfidf", "idf", "narrative"]);
  assert.deepEqual(model.narrative, gate);
  assert.throws(() => new VerificationModel({ ...model, narrative: undefined }), /narrative part/);
  const seen: string[] = [];
  const at = (p: number) =>
    new VerificationModel(model, async (texts) => {
      seen.push(...texts);
      return texts.map(() => p);
    });
  const noEncoder = async (): Promise<Float32Array[]> => {
    throw new Error("no encoder");
  };
  const probs = async (m: VerificationModel) => {
    const [out] = await m.score(
      [m.prepare("coral reduces heat in region 1", ["Coral was sampled."])],
      noEncoder,
    );
    return m.verdict(out).probs.refutes;
  };
  assert.ok((await probs(at(0.9))) > (await probs(at(0.1))));
  assert.deepEqual(seen, ["coral reduces heat in region 1", "coral reduces heat in region 1"]);
  await assert.rejects(
    trainVerificationModel(train, { folds: 2 }).then((t) => t.refit(["narrative"])),
    /narrativeGate/,
  );
});

test("narrative gate rows: dev claims, their evidence and same-text rows are never seen; a fold's claims are out of its gate", () => {
  const train = [
    { claimId: "cf:1", claim: "Sea ice is growing." },
    { claimId: "cf:2", claim: "CO2 is plant food." },
  ];
  const dev = [
    {
      claimId: "cf:9",
      claim: "Models run too hot.",
      source: "climate-fever" as const,
      sentences: ["Models match."],
    },
  ];
  const fold = (id: string) => (id === "cf:1" ? 0 : 1);
  const sides = stanceRowSides(
    [
      { id: "cf:1", text: "Sea ice is growing." },
      { id: "cf:2:e7", text: "Plants grow faster." },
      { id: "flicc:3", text: "Models run too HOT" },
      { id: "cf-evidence:x", text: "Models match." },
      { id: "flicc:4", text: "CO2 is plant food" },
      { id: "cards:5", text: "Scientists are biased." },
      { id: "cf:9", text: "Models run too hot." },
    ],
    train,
    dev,
    fold,
  );
  assert.deepEqual(sides, [0, 1, DEV_SIDE, DEV_SIDE, 1, -1, DEV_SIDE]);
});

test("foldGroups keeps a SciFact claim and its negation on the same abstract in one fold; judged pairs by claim", () => {
  const train = [
    { source: "scifact" as const, claimId: "sf:1", abstractId: "9" },
    { source: "scifact" as const, claimId: "sf:2", abstractId: "9" },
    { source: "own" as const, claimId: "ac-1", abstractId: "arXiv:1" },
    { source: "own" as const, claimId: "ac-2", abstractId: "arXiv:1" },
    { source: "own" as const, judged: true, claimId: "uc-1", abstractId: "arXiv:1" },
    { source: "own" as const, judged: true, claimId: "uc-2", abstractId: "arXiv:1" },
    { source: "climate-fever" as const, claimId: "cf:1", abstractId: "e1" },
    { source: "climate-fever" as const, claimId: "cf:2", abstractId: "e1" },
  ];
  const g = foldGroups(train);
  assert.equal(g[0], g[1]);
  assert.equal(g[2], g[3]);
  assert.deepEqual(new Set([g[4], g[5], g[6], g[7]]).size, 4);
  assert.notEqual(g[0], g[2]);
  // Every fold holds out whole groups: no group has rows on both sides.
  for (const split of claimFolds(g, 5)) {
    const held = new Set(split.held.map((r) => g[r]));
    assert.ok(split.fit.every((r) => !held.has(g[r])));
  }
});

test("dropLeaks removes train pairs written from the abstract of a dev pair, and keeps judged and Climate-FEVER ones", () => {
  const pair = (source: string, claimId: string, abstractId: string, judged?: boolean) => ({
    source,
    claimId,
    claim: `claim ${claimId}`,
    abstractId,
    ...(judged ? { judged } : {}),
  });
  const { train } = dropLeaks({
    train: [
      pair("scifact", "sf:1", "9"),
      pair("scifact", "sf:2", "10"),
      pair("climate-fever", "cf:1", "e1"),
      pair("own", "uc-1", "arXiv:1", true),
    ],
    dev: [
      pair("scifact", "sf:3", "9"),
      pair("climate-fever", "cf:2", "e1"),
      pair("own", "uc-2", "arXiv:1", true),
    ],
  });
  assert.deepEqual(
    train.map((e) => e.claimId),
    ["sf:2", "cf:1", "uc-1"],
  );
});
