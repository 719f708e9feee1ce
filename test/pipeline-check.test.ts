import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { aboutFirst, headSize, MAX_K } from "../src/pipeline/pipeline.ts";
import { type TestPipeline, testPipeline } from "./pipeline-fixtures.ts";
import { ABSTRACTS } from "./retrieval-fixtures.ts";

let t: TestPipeline;
before(async () => {
  t = await testPipeline();
});
after(async () => {
  await t.cleanup();
});

const SOLAR = "Solar irradiance explains the warming since 1950";

/** A pipeline whose stub gate gives abstracts that mention the sun P(about) `sun`, the others `other`. */
const sunGated = (sun: number, other: number) =>
  testPipeline({
    relevance: {
      probabilities: async (_claim, docs) =>
        docs.map((d) => (d.sentences.some((s) => /\bsun\b/i.test(s)) ? sun : other)),
    },
  });

test("check returns the top k abstracts, verified in one batch, with their sentences, rationale and links", async () => {
  t.verifierCalls.length = 0;
  const r = await t.pipeline.check(SOLAR, { k: 3 });
  assert.equal(r.claim, SOLAR);
  assert.equal(r.evidence.length, 3);
  assert.deepEqual(t.verifierCalls, [3], "all retrieved abstracts go to the verifier in one call");
  assert.deepEqual(
    r.evidence.map((e) => e.rank),
    [1, 2, 3],
  );
  const top = r.evidence[0];
  assert.equal(top.abstract_id, "a3");
  assert.equal(top.title, "Solar activity and climate");
  assert.deepEqual(top.sentences, [
    "Changes in solar irradiance cannot explain warming since 1950.",
    "The sun has been slightly cooling.",
  ]);
  assert.equal(top.label, "Refutes");
  assert.equal(top.confidence, 0.8);
  assert.deepEqual([top.p_supports, top.p_refutes, top.p_nei], [0.1, 0.8, 0.1]);
  assert.deepEqual(top.rationale_indices, [0]);
  assert.deepEqual(top.rationale, [top.sentences[0]]);
  assert.equal(top.doi, "10.1/a3");
  assert.equal(top.url, "https://doi.org/10.1/a3");
  assert.ok(top.retrieval_score >= r.evidence[1].retrieval_score);
  for (const e of r.evidence) {
    const src = ABSTRACTS.find((a) => a.id === e.abstract_id);
    assert.ok(src, `retrieved ${e.abstract_id} is from the corpus`);
    assert.equal(e.sentences.join(" "), src.abstract);
    assert.deepEqual(
      e.rationale,
      e.rationale_indices.map((i) => e.sentences[i]),
    );
  }
  for (const stage of ["narratives", "retrieval", "verification", "total"] as const)
    assert.ok(r.timings_ms[stage] >= 0, stage);
  assert.ok(r.timings_ms.total >= r.timings_ms.retrieval);
});

test("check counts the labels in the summary and names the narratives", async () => {
  const r = await t.pipeline.check("Sea level rise and thermal expansion of glacier melt", { k: 5 });
  const count = (label: string) => r.evidence.filter((e) => e.label === label).length;
  assert.equal(r.summary.supports, count("Supports"));
  assert.equal(r.summary.refutes, count("Refutes"));
  assert.equal(r.summary.nei, count("Not Enough Information"));
  assert.equal(r.evidence[0].abstract_id, "a2");
  assert.equal(r.evidence[0].label, "Supports");
  assert.deepEqual(r.narratives, [
    {
      code: "0_0",
      name: "No contrarian narrative",
      description: r.narratives[0].description,
      probability: 0.9,
    },
  ]);
  assert.match(r.narratives[0].description, /no contrarian claim/);
});

test("a group-5 claim is marked for human review and its lean is not shown as confident", async () => {
  const r = await t.pipeline.check("Scientists cannot explain warming since 1950 with solar irradiance");
  assert.deepEqual(
    r.narratives.map((n) => n.code),
    ["5_1"],
  );
  assert.equal(r.narratives[0].name, "Climate science is unreliable");
  assert.equal(r.caution.needs_human_review, true);
  assert.match(r.caution.reason ?? "", /normative or epistemological/);
  assert.match(r.summary.text, /^Needs human review/);
  assert.ok(r.summary.lean_confidence <= 0.2 + 1e-9, "scaled by 1 - P(group 4 or 5) = 0.2");
});

test("a claim given no narrative is never flagged as normative, whatever mass groups 4/5 have", async () => {
  const r = await t.pipeline.check("Climate policies cut emissions in Europe");
  assert.deepEqual(
    r.narratives.map((n) => n.code),
    ["0_0"],
  );
  assert.equal(r.p_narrative, 0.45);
  assert.doesNotMatch(r.caution.reason ?? "", /normative/);
  assert.doesNotMatch(r.summary.text, /^Needs human review/);
});

test("check refuses an empty claim, a claim without words and a bad k", async () => {
  await assert.rejects(t.pipeline.check(""), DataError);
  await assert.rejects(t.pipeline.check(" ?! "), /no words/);
  await assert.rejects(t.pipeline.check(SOLAR, { k: 0 }), /k must be/);
  await assert.rejects(t.pipeline.check(SOLAR, { k: MAX_K + 1 }), /k must be/);
  await assert.rejects(t.pipeline.check(SOLAR, { k: 1.5 }), /k must be/);
});

test("verify takes an abstract id or a text; abstract looks an id up", async () => {
  const byId = await t.pipeline.verify(SOLAR, "a3");
  assert.equal(byId.abstract_id, "a3");
  assert.equal(byId.label, "Refutes");
  assert.equal(byId.url, "https://doi.org/10.1/a3");
  const byText = await t.pipeline.verify("Coral reefs recover slowly", {
    abstract: "Bleaching is common. Reefs recover slowly between events.",
    title: "Reefs",
  });
  assert.equal(byText.abstract_id, null);
  assert.equal(byText.title, "Reefs");
  assert.deepEqual(byText.sentences, ["Bleaching is common.", "Reefs recover slowly between events."]);
  assert.equal(byText.label, "Supports");
  assert.deepEqual(byText.rationale, ["Reefs recover slowly between events."]);
  await assert.rejects(t.pipeline.verify(SOLAR, "nope"), /no abstract "nope"/);
  await assert.rejects(t.pipeline.verify(SOLAR, { abstract: "  " }), /abstract is empty/);

  const a = t.pipeline.abstract("a8");
  assert.equal(a?.title, "Antarctic ice sheet");
  assert.equal(a?.sentences.length, 2);
  assert.equal(t.pipeline.abstract("missing"), undefined);
  assert.equal(t.pipeline.abstracts, ABSTRACTS.length);
});

test("an abstract below the relevance gate is not about the claim: NEI, no rationale, out of the summary", async () => {
  // A stub gate: abstracts about the sun are off-topic, the rest on-topic.
  const gated = await sunGated(0.1, 0.9);
  try {
    const r = await gated.pipeline.check(SOLAR, { k: 5 });
    // The gated abstract is the retriever's first, shown after the four the gate passes (about first).
    const top = r.evidence[4];
    assert.deepEqual([top.abstract_id, top.rank], ["a3", 1]);
    assert.deepEqual([top.about_claim, top.relevance, top.label], [false, 0.1, "Not Enough Information"]);
    // relevance x the verifier's (0.1, 0.8, 0.1), the rest NEI: the label is the top class shown.
    assert.deepEqual([top.p_supports, top.p_refutes, top.p_nei, top.confidence], [0.01, 0.08, 0.91, 0.91]);
    assert.deepEqual(top.rationale_indices, []);
    assert.equal(r.summary.not_about_claim, r.evidence.filter((e) => !e.about_claim).length);
    assert.equal(r.summary.refutes, 0, "the gated Refutes is not counted");
    for (const e of r.evidence.slice(0, 4)) assert.deepEqual([e.about_claim, e.relevance], [true, 0.9]);
    // verify tells the same story for the same pair.
    const v = await gated.pipeline.verify(SOLAR, "a3");
    assert.deepEqual([v.label, v.about_claim, v.p_nei], [top.label, false, top.p_nei]);
  } finally {
    await gated.cleanup();
  }
});

test("about first: abstracts the gate passes first in retrieval order, then the rest likeliest about first, k at most", () => {
  assert.deepEqual(aboutFirst([0.1, 0.9, 0.2, 0.6, 0.7, 0.05], 3), [1, 3, 4]);
  // The places left go to the likeliest of the rest (0.2 before 0.1), ties in retrieval order.
  assert.deepEqual(aboutFirst([0.1, 0.9, 0.2, 0.6], 3), [1, 3, 2]);
  assert.deepEqual(aboutFirst([0.3, 0.1, 0.3, 0.4], 3), [3, 0, 2]);
  // Without a gate (null), retrieval order; a probability of exactly the gate passes.
  assert.deepEqual(aboutFirst([null, null, null], 2), [0, 1]);
  assert.deepEqual(aboutFirst([0.2, 0.5], 1), [1]);
  assert.deepEqual([headSize(5), headSize(1), headSize(50)], [10, 2, 60]);
});

test("with a gate, check reads the top 2k with it and verifies only the k it shows", async () => {
  // The gate passes only abstracts that mention the sun: ranked low by the retriever, they come first.
  const gated = await sunGated(0.9, 0.1);
  try {
    gated.verifierCalls.length = 0;
    const r = await gated.pipeline.check(SOLAR, { k: 1 });
    assert.deepEqual(gated.verifierCalls, [1]);
    assert.equal(r.evidence.length, 1);
    assert.equal(r.evidence[0].about_claim, true);
    const plain = await t.pipeline.check(SOLAR, { k: 2 });
    // The shown abstract is one of the top 2 the retriever ranks, with its retrieval rank.
    assert.ok(plain.evidence.some((e) => e.abstract_id === r.evidence[0].abstract_id));
    assert.equal(
      r.evidence[0].rank,
      plain.evidence.findIndex((e) => e.abstract_id === r.evidence[0].abstract_id) + 1,
    );
  } finally {
    await gated.cleanup();
  }
});
