import assert from "node:assert/strict";
import { test } from "node:test";
import { shares } from "../src/retrieval/train-judged.ts";
import {
  fitAbstractPrior,
  fitSubjectPrior,
  pairPrior,
  pairSubjectPrior,
  type RelevancePair,
} from "../src/verification/build-relevance.ts";
import { IdfTable } from "../src/verification/idf.ts";
import { profile } from "../src/verification/lexical.ts";
import {
  abstractPriorFeature,
  featureTable,
  GATE_LEAD,
  PRIOR_FEATURE,
  RELEVANCE_FEATURES,
  RELEVANCE_FORMAT,
  RelevanceGate,
  type RelevanceJson,
  selectFeatures,
  subjectPriorOf,
} from "../src/verification/relevance.ts";
import { bm25Self, SUBJECT_FEATURES, subjectFeatures, UnitWords } from "../src/verification/subject.ts";

/** Three directions: ice words, ocean words, and everything else. */
const VECTORS: Record<string, number[]> = {
  glacier: [1, 0, 0],
  glaciers: [0.95, 0.05, 0],
  ice: [0.9, 0.1, 0],
  retreat: [0.8, 0.2, 0],
  ocean: [0, 1, 0],
  acidification: [0.1, 0.9, 0],
  sampling: [0, 0.1, 0.9],
  microfluidic: [0, 0, 1],
};
const words = new UnitWords({
  vector: (w) => (VECTORS[w] ? Float32Array.from(VECTORS[w]) : undefined),
  sif: (tokens) => {
    const v = new Float32Array(3);
    for (const t of tokens) for (let i = 0; i < 3; i++) v[i] += VECTORS[t]?.[i] ?? 0;
    const n = Math.hypot(...v) || 1;
    return v.map((x) => x / n);
  },
});
const idf = IdfTable.fit(
  ["glacier ice", "ocean sampling", "ocean waves", "ice sheets", "sampling methods"].map(profile),
);
const f = (claim: string, sentences: string[], title?: string) =>
  Object.fromEntries(
    SUBJECT_FEATURES.map((n, i) => [n, subjectFeatures(words, idf, claim, sentences, title)[i]]),
  );

test("subject features: a title on the claim's subject matches its words softly; one on another subject does not", () => {
  const claim = "ice retreat";
  const on = f(claim, ["Mountain ice is thinning."], "Glaciers in retreat");
  const off = f(claim, ["A chip samples sea water."], "Microfluidic ocean sampling");
  // "ice" is not in the title but "glaciers" is near it: the soft coverage sees the subject, exact overlap would not.
  assert.ok(on.soft_title > 0.9, `on ${on.soft_title}`);
  assert.ok(off.soft_title < 0.3, `off ${off.soft_title}`);
  assert.ok(on.sif_title > off.sif_title);
  assert.ok(on.exact_share_title > 0 && off.exact_share_title === 0);
});

test("subject features: the claim's rarest words are scored on their own, and nothing in common scores 0", () => {
  const claim = "ocean acidification";
  const shared = f(claim, ["ocean acidification lowers pH."], "Ocean acidification");
  assert.equal(shared.rare3_title, 1);
  assert.equal(shared.soft_lead, 1);
  const none = f(claim, [], undefined);
  assert.deepEqual([none.soft_title, none.soft_lead, none.sif_best_sentence, none.bm25_self], [0, 0, 0, 0]);
});

test("bm25Self: 0 with no claim key in the text, rising with the keys found, never above 1", () => {
  const claim = "glacier ice retreat";
  const none = bm25Self(idf, claim, "ocean waves and sampling");
  const one = bm25Self(idf, claim, "the glacier");
  const all = bm25Self(idf, claim, "glacier ice retreat glacier ice retreat");
  assert.equal(none, 0);
  assert.ok(one > 0 && one < all && all <= 1, `${one} ${all}`);
});

test("selectFeatures: named features in order, a*b as a product, an unknown name is an error", () => {
  const table = featureTable(
    RELEVANCE_FEATURES.map((_, i) => i),
    0.5,
    SUBJECT_FEATURES.map(() => 2),
  );
  assert.deepEqual(
    selectFeatures(["title", "use_title_lead", "soft_title", "use_title_lead*soft_title"], table),
    [RELEVANCE_FEATURES.indexOf("title"), 0.5, 2, 1],
  );
  assert.throws(() => selectFeatures(["nope"], featureTable([], undefined, undefined)), /"nope"/);
});

/** A gate model reading one feature: P = sigmoid(weight x feature). */
function oneFeatureModel(feature: string, weight: number, extra: Partial<RelevanceJson> = {}): RelevanceJson {
  return {
    format: RELEVANCE_FORMAT,
    idf: idf.json,
    features: [feature],
    ...extra,
    standardiser: { mean: [0], std: [1] },
    model: {
      kind: "binary",
      classes: 2,
      dim: 1,
      weights: Buffer.from(Float32Array.from([weight]).buffer).toString("base64"),
      bias: [0],
    },
  };
}

/** A gate reading only the USE-lite similarity: P = sigmoid(4 x cosine). */
function similarityGate(embed: (texts: string[]) => Promise<Float32Array[]>): RelevanceGate {
  return new RelevanceGate(
    oneFeatureModel("use_title_lead", 4, { encoder: "use-lite@0.2.0" }),
    () => 0.5,
    embed,
  );
}

test("relevance gate: an abstract's stored vector is used instead of embedding its lead again, with the same result", async () => {
  const vec = (t: string) => Float32Array.from([t.length % 7, t.includes("ice") ? 3 : 1, 1]);
  const asked: string[][] = [];
  const gate = similarityGate(async (texts) => {
    asked.push(texts);
    return texts.map(vec);
  });
  const doc = { title: "Ice loss", sentences: ["Greenland loses ice."] };
  const lead = GATE_LEAD.text({
    id: "",
    title: doc.title,
    abstract: doc.sentences.join(" "),
    sentences: doc.sentences,
  });
  const claim = "Greenland is losing ice";
  const [embedded] = await gate.probabilities(claim, [doc]);
  const [stored] = await gate.probabilities(claim, [{ ...doc, vector: vec(lead) }]);
  assert.ok(Math.abs(embedded - stored) < 1e-9);
  assert.deepEqual(asked, [[claim, lead], [claim]]);
});

test("abstract prior: a much-shown abstract judged off-subject lowers P(about); unknown ids get the overall share", async () => {
  const prior = {
    rate: 0.2,
    strength: 4,
    counts: { hub: [0, 12] as [number, number], apt: [6, 8] as [number, number] },
  };
  // (0 + 4 x 0.2) / (12 + 4) = 0.05; (6 + 0.8) / 12 = 0.567; never judged: 0.2.
  const logit = (p: number) => Math.log(p / (1 - p));
  assert.ok(Math.abs(abstractPriorFeature(prior, 0, 12) - logit(0.05)) < 1e-12);
  assert.ok(Math.abs(abstractPriorFeature(prior, 0, 0) - logit(0.2)) < 1e-12);
  const json = oneFeatureModel(PRIOR_FEATURE, 1, { abstractPrior: prior });
  const gate = new RelevanceGate(json, () => 0.5);
  const doc = { title: "Sea ice", sentences: ["Arctic sea ice melts."] };
  const [hub, apt, unknown, none] = await gate.probabilities("Arctic sea ice is shrinking", [
    { ...doc, id: "hub" },
    { ...doc, id: "apt" },
    { ...doc, id: "other" },
    doc,
  ]);
  assert.ok(Math.abs(hub - 0.05) < 1e-6 && Math.abs(apt - 6.8 / 12) < 1e-6, `${hub} ${apt}`);
  assert.ok(Math.abs(unknown - 0.2) < 1e-6 && Math.abs(none - 0.2) < 1e-6);
});

test("abstract prior in training: counted from judged pairs only, each counted pair's own judgement left out", () => {
  const pair = (
    abstractId: string,
    about: 0 | 1,
    kind: RelevancePair["kind"] = "own-judged",
  ): RelevancePair => ({
    claimId: `c-${abstractId}-${about}`,
    source: "own",
    claim: "claim",
    sentences: ["s"],
    about,
    abstractId,
    kind,
  });
  const hub = [pair("hub", 0), pair("hub", 0), pair("hub", 1)];
  const written = pair("hub", 1, "own-written");
  const prior = fitAbstractPrior([...hub, pair("apt", 1), written], 4);
  // Written claims are about their abstract by construction: they never count.
  assert.deepEqual(prior.counts, { hub: [1, 3], apt: [1, 1] });
  assert.equal(prior.rate, 0.5);
  // A counted pair sees the others only: the about one sees 0 of 2, an off-subject one 1 of 2.
  assert.equal(pairPrior(prior, hub[2], true), abstractPriorFeature(prior, 0, 2));
  assert.equal(pairPrior(prior, hub[0], true), abstractPriorFeature(prior, 1, 2));
  // A held-out pair (or a written one) sees all of them.
  assert.equal(pairPrior(prior, hub[2], false), abstractPriorFeature(prior, 1, 3));
  assert.equal(pairPrior(prior, written, true), abstractPriorFeature(prior, 1, 3));
  assert.equal(pairPrior(prior, pair("new", 1), false), abstractPriorFeature(prior, 0, 0));
});

test("subject prior: judged pairs by claim code x labelled abstract code, a counted claim's own pairs left out", () => {
  // Two codes: 0 = sea level, 1 = economics. Claims are read by their (here hand-set) subject distributions.
  const topicsOf = new Map<string, number[]>([
    ["sea level claim", [1, 0]],
    ["other sea level claim", [1, 0]],
    ["mixed claim", [0.5, 0.5]],
  ]);
  const claimTopics = (c: string) => topicsOf.get(c) as number[];
  const codes = new Map([
    ["tide", 0],
    ["gdp", 1],
  ]);
  const pair = (claimId: string, claim: string, abstractId: string, about: 0 | 1): RelevancePair => ({
    claimId,
    source: "own",
    claim,
    sentences: ["s"],
    about,
    abstractId,
    kind: "own-judged",
  });
  const pairs = [
    pair("a", "sea level claim", "tide", 1),
    pair("a", "sea level claim", "gdp", 0),
    pair("b", "other sea level claim", "tide", 1),
    pair("b", "other sea level claim", "gdp", 0),
    pair("b", "other sea level claim", "unlabelled", 1),
  ];
  const fit = fitSubjectPrior(pairs, claimTopics, codes, 2, 2);
  // The unlabelled abstract does not count: 2 of 4 about.
  assert.equal(fit.rate, 0.5);
  const logit = (a: number, n: number) => {
    const q = (a + 2 * 0.5) / (n + 2);
    return Math.round(Math.log(q / (1 - q)) * 1e4) / 1e4;
  };
  assert.deepEqual(fit.prior.logOdds, [
    [logit(2, 2), logit(0, 2)],
    [logit(0, 0), logit(0, 0)],
  ]);
  // Sea-level claims against sea-level papers: about; against economics papers: not.
  assert.ok(subjectPriorOf(fit.prior, [1, 0], "tide") > 0 && subjectPriorOf(fit.prior, [1, 0], "gdp") < 0);
  // A claim's distribution weighs the rows; an abstract without a label gets the overall share (the gate scores it
  // with its unlabelled model, which does not read the subject prior).
  assert.ok(
    Math.abs(subjectPriorOf(fit.prior, [0.5, 0.5], "tide") - (logit(2, 2) + logit(0, 0)) / 2) < 1e-12,
  );
  assert.equal(subjectPriorOf(fit.prior, [1, 0], "unlabelled"), fit.prior.neutral);
  assert.equal(fit.prior.neutral, 0);
  // Counted in the fit, claim a reads the other claim's record only (1 of 1 about for tide papers)...
  const q = (1 + 2 * 0.5) / (1 + 2);
  assert.ok(Math.abs(pairSubjectPrior(fit, pairs[0], claimTopics, true) - Math.log(q / (1 - q))) < 1e-12);
  // ...held out, it reads all of it.
  assert.equal(pairSubjectPrior(fit, pairs[0], claimTopics, false), logit(2, 2));
  // A new claim of mixed subject: half each row.
  const mixed = pair("c", "mixed claim", "gdp", 0);
  assert.ok(
    Math.abs(pairSubjectPrior(fit, mixed, claimTopics, true) - (logit(0, 2) + logit(0, 0)) / 2) < 1e-12,
  );

  // An economics paper that is also labelled with the tide code reads the more favourable of its codes; the table
  // is still counted by main codes only, and a counted claim's own pairs come out of each column it reads.
  const withAlso = fitSubjectPrior(pairs, claimTopics, codes, 2, 2, new Map([["gdp", [0]]]));
  assert.deepEqual(withAlso.prior.logOdds, fit.prior.logOdds);
  assert.deepEqual(withAlso.prior.also, { gdp: [0] });
  assert.equal(subjectPriorOf(withAlso.prior, [1, 0], "gdp"), logit(2, 2));
  assert.equal(subjectPriorOf(withAlso.prior, [1, 0], "tide"), logit(2, 2));
  assert.ok(
    Math.abs(pairSubjectPrior(withAlso, pairs[1], claimTopics, true) - Math.log(q / (1 - q))) < 1e-12,
  );
  // Without other codes the model file carries none.
  assert.equal(fit.prior.also, undefined);
});

test("judged ranking shares: of judged shown, and a lower bound counting never-judged abstracts as off-subject", () => {
  const s = shares([
    [true, false, null, null, true],
    [false, false, false, false, false],
  ]);
  assert.equal(s.judged.value, 2 / 8);
  assert.equal(s.lower.value, 2 / 10);
  assert.equal(s.unjudged, 2);
  assert.ok(s.judged.low <= s.judged.value && s.judged.value <= s.judged.high);
});
