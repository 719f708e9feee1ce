import assert from "node:assert/strict";
import { test } from "node:test";
import { hasTrainingData } from "../src/data/paths.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { TfidfVectorizer } from "../src/learning/tfidf.ts";
import { climateLexicon, type ScopeText, scopeWeights } from "../src/scope/build.ts";
import {
  englishLanguage,
  loadScopeDetector,
  scopeFeatures,
  scopeOf,
  weatherSmallTalk,
} from "../src/scope/scope.ts";
import { loadVerificationModel, openBuiltinVerifier } from "../src/verification/builtin.ts";
import { contrastClaim } from "../src/verification/contrast.ts";
import { contrastGuard, partProbs } from "../src/verification/model.ts";
import { builtinAbstracts } from "../src/verification/own-data.ts";
import { gatedProbs, loadRelevanceGate, RELEVANCE_GATE } from "../src/verification/relevance.ts";
import { loadVerificationData } from "../src/verification/train.ts";
import { agreesWithProbs, probsToArray } from "../src/verification/verifier.ts";

const haveData = hasTrainingData();

test("the shipped verifier's label is the most probable shown class on every dev pair (0 disagreements)", {
  skip: !haveData,
}, async () => {
  const { dev } = await loadVerificationData();
  const verifier = await openBuiltinVerifier();
  const verdicts = await verifier.verifyPairs(
    dev.map((e) => ({
      claim: e.claim,
      abstract: e.sentences.join(" "),
      sentences: e.sentences,
      title: e.title,
    })),
  );
  await verifier.close();
  assert.equal(verdicts.length, dev.length);
  const disagreements = verdicts.filter((v) => !agreesWithProbs(v));
  assert.equal(disagreements.length, 0, JSON.stringify(disagreements.slice(0, 3)));
  // The decision weights are really folded in: the shipped weights are not all 1, and labels still follow argmax.
  const model = await loadVerificationModel();
  assert.ok(model.json.pairs.single.classWeights.some((w) => w !== 1));
  assert.ok(new Set(verdicts.map((v) => v.label)).size === 3);
});

test("folded probabilities: argmax is the class-weighted argmax of the calibrated probabilities", async () => {
  const model = await loadVerificationModel();
  const part = model.json.pairs.single;
  for (const logits of [
    [0.2, 0.1, 0.5],
    [1, -0.4, 0.9],
    [-1, 0.3, 0.35],
    [0.0, 0.0, 0.0],
  ]) {
    const shown = partProbs(logits, part);
    const scaled = logits.map((z) => Math.exp(z / part.temperature));
    const weighted = scaled.map((x, k) => x * part.classWeights[k]);
    const top = (xs: number[]) => xs.indexOf(Math.max(...xs));
    assert.equal(top(shown), top(weighted), JSON.stringify(logits));
    assert.ok(Math.abs(shown.reduce((a, b) => a + b, 0) - 1) < 1e-9);
  }
});

test("contrast rule: direction swaps and negations, CheckList style", () => {
  assert.equal(contrastClaim("Sea level is rising"), "Sea level is falling");
  assert.equal(
    contrastClaim("Arctic sea ice has been growing since 2012"),
    "Arctic sea ice has been shrinking since 2012",
  );
  assert.equal(contrastClaim("Sea level rise is not accelerating"), "Sea level rise is accelerating");
  assert.equal(contrastClaim("Ice sheet melt is accelerating"), "Ice sheet melt is not accelerating");
  // A claim about a rate asserts the rate: its direction nouns stay.
  assert.equal(contrastClaim("Arctic ice loss is accelerating"), "Arctic ice loss is not accelerating");
  assert.equal(
    contrastClaim("Warming has been slowing since 1998"),
    "Warming has not been slowing since 1998",
  );
  assert.equal(contrastClaim("Summers bring more heat waves"), "Summers bring less heat waves");
  assert.equal(
    contrastClaim("2016 was a record high year for temperature"),
    "2016 was a record low year for temperature",
  );
  assert.equal(contrastClaim("CO2 is a greenhouse gas"), "CO2 is not a greenhouse gas");
  assert.equal(contrastClaim("Rising seas"), "Falling seas");
  assert.equal(contrastClaim("Polar bears"), undefined);
  // "global warming" names the subject, not a direction: the claim's own direction word is swapped, or it is negated.
  assert.equal(
    contrastClaim("Climate models have overestimated global warming"),
    "Climate models have underestimated global warming",
  );
  assert.equal(
    contrastClaim("Global warming is making hurricanes stronger"),
    "Global warming is not making hurricanes stronger",
  );
  assert.equal(contrastClaim("Global warming stopped in 1998"), "Global warming continued in 1998");
  // So does "sea level rise": its progress is what a claim about it asserts ("Sea level fall is accelerating" is
  // no contrast). A rise that is the claim's direction still swaps.
  assert.equal(contrastClaim("Sea level rise is accelerating."), "Sea level rise is not accelerating.");
  assert.equal(
    contrastClaim("Sea-level rise has increased since 1990"),
    "Sea-level rise has decreased since 1990",
  );
  assert.equal(contrastClaim("Temperatures rise every decade"), "Temperatures fall every decade");
});

/** Each side of the direction check: the claim's verdict, a contrast that takes the same side, the result. */
const GUARD_CASES = [
  {
    label: "Supports" as const,
    probs: { supports: 0.6, refutes: 0.1, nei: 0.3 },
    sameSide: { supports: 0.7, refutes: 0.1, nei: 0.2 },
    otherSide: { supports: 0.2, refutes: 0.5, nei: 0.3 },
    guarded: [0.3, 0.1, 0.6],
  },
  {
    label: "Refutes" as const,
    probs: { supports: 0.15, refutes: 0.55, nei: 0.3 },
    sameSide: { supports: 0.1, refutes: 0.6, nei: 0.3 },
    otherSide: { supports: 0.6, refutes: 0.1, nei: 0.3 },
    guarded: [0.15, 0.275, 0.575],
  },
];

for (const c of GUARD_CASES) {
  test(`direction check: a text that ${c.label.toLowerCase()} a claim's contrast as much as the claim takes neither side`, () => {
    const v = {
      label: c.label,
      confidence: Math.max(...probsToArray(c.probs)),
      probs: c.probs,
      rationale: [0],
    };
    const candidates = [{ index: 0, selector: 0.9 }];
    // Half of P(label) moves to NEI, which is then the top class.
    const both = contrastGuard(v, c.sameSide, candidates);
    assert.equal(both.label, "Not Enough Information");
    assert.deepEqual(
      probsToArray(both.probs).map((x) => Number(x.toFixed(3))),
      c.guarded,
    );
    assert.deepEqual(both.rationale, []);
    assert.ok(agreesWithProbs(both));
    // The contrast takes the other side, as it should: left as it is.
    assert.equal(contrastGuard(v, c.otherSide, candidates), v);
    // NEI is never touched.
    const nei = {
      ...v,
      label: "Not Enough Information" as const,
      probs: { supports: 0.2, refutes: 0.3, nei: 0.5 },
    };
    assert.equal(contrastGuard(nei, c.sameSide, candidates), nei);
  });
}

test("the shipped verifier: a contrarian abstract that says what a negated claim says is not shown refuting it", async () => {
  // A built-in abstract (tide gauges "certainly not positively accelerating"): before the Refutes direction check
  // the shipped verifier called it Refutes for "Sea level rise is not accelerating", as SciFact's negated claims
  // taught it.
  const doc = (await builtinAbstracts())("arXiv:1303.5519");
  assert.ok(doc, "arXiv:1303.5519 is in the built-in corpus");
  const verifier = await openBuiltinVerifier();
  const v = await verifier.verify("Sea level rise is not accelerating", {
    abstract: doc.sentences.join(" "),
    sentences: doc.sentences,
    title: doc.title,
  });
  assert.notEqual(v.label, "Refutes", JSON.stringify(v.probs));
  await verifier.close();
});

test("a contrast pair through the shipped verifier: claim and contrast are never both Supports", async () => {
  const verifier = await openBuiltinVerifier();
  const sentences = [
    "Global mean sea level has been rising since 1900 and the rate of rise has increased since 1993.",
    "Arctic sea ice extent reached a record low in September 2012.",
    "Mountain glaciers are growing in the Karakoram while most others retreat.",
  ];
  const claims = [
    "Sea level is rising",
    "Arctic sea ice has been growing since 2012",
    "Glaciers are growing",
  ];
  for (const claim of claims) {
    const contrast = contrastClaim(claim) as string;
    for (const s of sentences) {
      const [a, b] = await verifier.verifyPairs([
        { claim, abstract: s },
        { claim: contrast, abstract: s },
      ]);
      assert.ok(!(a.label === "Supports" && b.label === "Supports"), `${claim} / ${contrast} on "${s}"`);
    }
  }
  await verifier.close();
});

test("relevance gate: the issue's malaria-drug abstract is not about the 97% consensus; an on-topic one is", async () => {
  const scope = await loadScopeDetector();
  const use = await openUseLite({ workers: 0 });
  const gate = await loadRelevanceGate(
    (t) => scope.pClimate(t),
    undefined,
    (texts) => use.embed(texts),
  );
  const claim = "Global sea level is rising, and the rise is speeding up";
  const [on, off] = await gate.probabilities(claim, [
    // An abstract as the corpus has them (a title and its findings): the gate is trained on such abstracts.
    {
      title: "Twentieth-century global mean sea level rise",
      sentences: [
        "Global mean sea level rose by about 20 cm over the twentieth century.",
        "Tide gauges and satellite altimetry show the rise continuing and accelerating.",
      ],
    },
    { sentences: ["Marine heatwaves cause mass coral bleaching.", "Reefs recover slowly between events."] },
  ]);
  assert.ok(on >= RELEVANCE_GATE && off < RELEVANCE_GATE, `on ${on}, off ${off}`);
  const [fake] = await gate.probabilities("The 97% consensus figure is fake", [
    {
      sentences: [
        "Artesunate is the first-line treatment of severe malaria.",
        "Counterfeit artesunate tablets containing no active ingredient were found in pharmacies in Cambodia.",
      ],
      title: "Fake Artesunate in Southeast Asia",
    },
  ]);
  assert.ok(fake < RELEVANCE_GATE, `malaria paper ${fake}`);
  await use.close();
  // Below the gate NEI is the top class of the gated probabilities, whatever the verifier said.
  for (const r of [0, 0.2, 0.49])
    for (const p of [
      { supports: 0.98, refutes: 0.01, nei: 0.01 },
      { supports: 0.3, refutes: 0.6, nei: 0.1 },
    ])
      assert.ok(
        agreesWithProbs({
          label: "Not Enough Information",
          confidence: gatedProbs(p, r).nei,
          probs: gatedProbs(p, r),
        }),
      );
});

test("scope: non-English claims and claims on other subjects are out of scope; climate claims are in", async () => {
  for (const t of [
    "El nivel del mar está subiendo más rápido que nunca",
    "Le réchauffement climatique est une invention des médias",
    "Die globale Erwärmung ist eine Erfindung der Wissenschaftler",
    "全球变暖是一个骗局",
    "Глобальное потепление — это обман",
  ])
    assert.equal(englishLanguage(t), false, t);
  for (const t of ["La Niña brings cooler winters to the north", "Sea level is rising", "CO2 is plant food"])
    assert.equal(englishLanguage(t), true, t);
  const detector = await loadScopeDetector();
  assert.equal(detector.assess("Arctic sea ice has been growing since 2012").in_scope, true);
  assert.equal(detector.assess("Global warming is a hoax").in_scope, true);
  const off = detector.assess("Aspirin lowers the risk of colorectal cancer in adults");
  assert.equal(off.in_scope, false);
  assert.match(off.reason ?? "", /not look like a claim about climate/);
  assert.equal(scopeOf("全球变暖是一个骗局", null).in_scope, false);
});

test("scope: weather small talk and everyday English are out of scope; weather-extreme trends stay in", async () => {
  for (const t of [
    "The weather today is sunny",
    "Tomorrow will be cold and windy",
    "Last night's storm was loud",
  ])
    assert.equal(weatherSmallTalk(t), true, t);
  for (const t of [
    "Heat waves are becoming more frequent",
    "It is cold today, so global warming is not happening",
    "Winters have been warmer for decades",
  ])
    assert.equal(weatherSmallTalk(t), false, t);
  const detector = await loadScopeDetector();
  const sunny = detector.assess("The weather today is sunny");
  assert.equal(sunny.in_scope, false);
  assert.match(sunny.reason ?? "", /weather at one time/);
  // No climate term: the lexicon feature, not the biomedical negatives, puts it out.
  assert.equal(detector.assess("The bakery on the corner sells fresh bread").in_scope, false);
  assert.equal(detector.assess("Coal power plants emit more carbon dioxide than gas plants").in_scope, true);
  // Everyday claims of the dev side of src/scope/everyday-english.ts (never trained on).
  for (const t of [
    "Left-handed tennis players have an advantage",
    "Vikings wore horned helmets",
    "Eggs raise your cholesterol",
  ])
    assert.equal(detector.assess(t).in_scope, false, t);
});

test("scope: the few everyday English claims weigh as much in all as the SciFact claims", () => {
  const row = (source: ScopeText["source"], i: number): ScopeText => ({
    id: `${source}${i}`,
    text: "x",
    climate: false,
    source,
  });
  const rows = [
    ...[0, 1, 2, 3, 4, 5].map((i) => row("scifact", i)),
    row("everyday english", 0),
    row("everyday english", 1),
    row("cards", 0),
  ];
  assert.deepEqual(scopeWeights(rows), [1, 1, 1, 1, 1, 1, 3, 3, 1]);
  // Never below 1: a corpus with more everyday claims than SciFact ones keeps plain weights.
  assert.deepEqual(
    scopeWeights([row("everyday english", 0), row("everyday english", 1), row("scifact", 0)]),
    [1, 1, 1],
  );
});

test("scope lexicon: terms frequent in climate texts and rare elsewhere; a text without one gets the extra feature", () => {
  const rows = [
    ...Array.from({ length: 6 }, (_, i) => ({
      id: `c${i}`,
      text: `glacier melt ${i} report`,
      climate: true,
    })),
    ...Array.from({ length: 6 }, (_, i) => ({
      id: `o${i}`,
      text: `patient trial ${i} report`,
      climate: false,
    })),
  ].map((r) => ({ ...r, source: "cards" as const }));
  assert.deepEqual(climateLexicon(rows, 3), ["glacier", "melt"]);
  assert.deepEqual(climateLexicon(rows, 0), []);
  const vectorizer = TfidfVectorizer.fit(
    rows.map((r) => r.text),
    { analyzer: "word", ngram: [1, 1], minDf: 1, sublinearTf: true },
  );
  const terms = new Set(["glacier", "melt"]);
  const last = (t: string) => [...scopeFeatures(vectorizer, terms, t).indices].at(-1);
  assert.equal(last("a trial report"), vectorizer.dim);
  assert.notEqual(last("glacier report"), vectorizer.dim);
});
