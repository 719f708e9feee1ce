import assert from "node:assert/strict";
import { test } from "node:test";
import type { Evidence } from "../src/pipeline/result.ts";
import { assess, caution, NORMATIVE_THRESHOLD, summarize } from "../src/pipeline/summary.ts";
import type { Label } from "../src/types.ts";

let n = 0;
function ev(label: Label, confidence: number, about = true): Evidence {
  n++;
  return {
    abstract_id: `a${n}`,
    title: null,
    title_raw: null,
    rank: n,
    retrieval_score: 1,
    label,
    confidence,
    p_supports: 0,
    p_refutes: 0,
    p_nei: 0,
    rationale: [],
    rationale_indices: [],
    sentences: ["s"],
    relevance: about ? 0.9 : 0.1,
    about_claim: about,
  };
}
const S = (c: number) => ev("Supports", c);
const R = (c: number) => ev("Refutes", c);
const N = (c = 0.7) => ev("Not Enough Information", c);
/** An abstract below the relevance gate (shown as NEI, not about the claim). */
const Off = () => ev("Not Enough Information", 0.9, false);

test("summarize: one side alone leans that way; its lean_confidence is the side's mean confidence", () => {
  const s = summarize([S(0.9), S(0.7), N(), N()]);
  assert.deepEqual([s.supports, s.refutes, s.nei, s.not_about_claim, s.lean], [2, 0, 2, 0, "supports"]);
  assert.equal(s.lean_confidence, 0.8);
  assert.match(
    s.text,
    /^Of 4 abstracts about this claim, 2 support it, 0 refute it and 2 do not say enough\./,
  );
  assert.match(s.text, /leans towards supporting/);
  const r = summarize([R(0.9), N()]);
  assert.deepEqual([r.lean, r.lean_confidence], ["refutes", 0.9]);
  const i = summarize([N(), N()]);
  assert.deepEqual([i.lean, i.lean_confidence], ["insufficient", 0]);
  assert.equal(summarize([]).text, "No abstract was found for this claim.");
});

test("summarize and caution: any Supports with any Refutes is mixed, needs review, and is never consistent", () => {
  // The case: 3 Supports and 2 Refutes was shown as "No caution: the evidence is consistent".
  const five = [S(0.9), S(0.8), S(0.7), R(0.6), R(0.5)];
  const s = summarize(five);
  assert.equal(s.lean, "mixed");
  assert.equal(s.lean_confidence, 0.314); // minority share 1.1 / 3.5
  assert.match(s.text, /mixed: some abstracts support the claim and some refute it/);
  const c = caution(five, s, 0);
  assert.equal(c.needs_human_review, true);
  assert.match(c.reason ?? "", /disagree \(3 support it, 2 refute it\)/);
  assert.doesNotMatch(`${s.text} ${c.reason}`, /consistent/);
  // One strong dissent against two is still a split (share 0.9 / 2.7 = 0.33).
  assert.equal(summarize([S(0.9), S(0.9), R(0.9)]).lean, "mixed");
});

test("summarize: one marginal dissent does not turn a clear answer into mixed, so a larger k cannot flip it", () => {
  // The product's case: insufficient-or-clear at k = 5 became "mixed" at k = 10 through one essay at Refutes 51%.
  const k5 = [S(0.9), S(0.85), N(), N(), N()];
  const marginal = { ...R(0.51), relevance: 0.55 };
  const k10 = [...k5, marginal, N(), N(), Off(), Off()];
  const at5 = summarize(k5);
  const at10 = summarize(k10);
  assert.deepEqual([at5.lean, at10.lean], ["supports", "supports"]);
  // The dissent is shown, counted and lowers the confidence, and the caution still sends it to review.
  assert.equal(at10.refutes, 1);
  assert.ok(at10.lean_confidence < at5.lean_confidence);
  assert.match(at10.text, /leans towards supporting the claim, though one abstract weakly disagrees\./);
  assert.match(caution(k10, at10, 0).reason ?? "", /disagree \(2 support it, 1 refute it\)/);
  // Weight is confidence x relevance: the same Refutes at full relevance and confidence is a real split.
  assert.equal(summarize([...k5, { ...R(0.9), relevance: 1 }]).lean, "mixed");
});

test("caution: no caution needs at least two agreeing abstracts about the claim", () => {
  const two = [S(0.9), S(0.8), N()];
  assert.equal(caution(two, summarize(two), 0).needs_human_review, false);
  // One agreeing abstract about the claim, however confident, and another decisive one not about it: review.
  const offSide = { ...S(0.95), about_claim: false, relevance: 0.3 };
  const one = [S(0.95), offSide, N()];
  assert.equal(caution(one, summarize(one), 0).needs_human_review, true);
  assert.match(caution(one, summarize(one), 0).reason ?? "", /Only one abstract takes a side/);
});

test("caution: a claim named as a contrarian narrative that the abstracts support is sent to review", () => {
  // "Sea level rise is not accelerating" with four tide-gauge papers that say so: agreeing, confident evidence,
  // but the two readings conflict, so no verdict is shown as settled.
  const four = [S(0.93), S(0.85), S(0.82), S(0.77)];
  const named = { code: "1_6", name: "Sea level rise is exaggerated", probability: 0.9 };
  assert.equal(caution(four, summarize(four), 0).needs_human_review, false);
  const c = caution(four, summarize(four), 0, undefined, named);
  assert.equal(c.needs_human_review, true);
  assert.match(
    c.reason ?? "",
    /contrarian narrative 1_6 "Sea level rise is exaggerated" \(90%\), yet the abstracts/,
  );
  assert.equal(assess(four, 0, undefined, named).caution.needs_human_review, true);
  // A named narrative the abstracts refute is no conflict.
  const refuted = [R(0.9), R(0.8)];
  assert.equal(caution(refuted, summarize(refuted), 0, undefined, named).needs_human_review, false);
});

test("summarize: abstracts not about the claim are counted apart and never weigh on the lean", () => {
  const s = summarize([S(0.8), Off(), Off(), N()]);
  assert.deepEqual([s.supports, s.refutes, s.nei, s.not_about_claim, s.lean], [1, 0, 1, 2, "supports"]);
  assert.match(s.text, /^Of 2 abstracts about this claim \(2 of the 4 abstracts found are not about it\)/);
  // Nothing relevant: said plainly, no lean, a caution.
  const none = [Off(), Off(), Off()];
  const ns = summarize(none);
  assert.equal(ns.lean, "insufficient");
  assert.equal(ns.text, "None of the 3 abstracts found is about this claim, so they say nothing about it.");
  assert.match(caution(none, ns, 0).reason ?? "", /None of the abstracts found is about this claim/);
});

test("summarize: one side whose verdicts are all below 50% gives no lean; one verdict at 50% or more does", () => {
  // The product's case: Refutes 40% (beside Supports 35%) for a mainstream claim was "leans towards refuting".
  const weak = summarize([R(0.4), N(), N()]);
  assert.deepEqual([weak.refutes, weak.lean, weak.lean_confidence], [1, "insufficient", 0]);
  assert.match(
    weak.text,
    /1 refutes it .* do not settle the claim: each one that takes a side does so with a probability below 50%\./,
  );
  const twoWeak = [S(0.45), S(0.42), N()];
  assert.equal(summarize(twoWeak).lean, "insufficient");
  assert.match(
    caution(twoWeak, summarize(twoWeak), 0).reason ?? "",
    /all do so with probabilities below 50%/,
  );
  // One verdict at 50% or more carries the side (with the lone-abstract caution).
  const one = summarize([S(0.5), S(0.4), N()]);
  assert.deepEqual([one.lean, one.lean_confidence], ["supports", 0.45]);
  // Both sides stay mixed, however weak: the rule only ever withholds a one-sided lean.
  assert.equal(summarize([S(0.4), R(0.41)]).lean, "mixed");
});

test("caution: thin evidence (nothing decisive, a lone weak side, a lone relevant abstract) needs review", () => {
  const firm = [S(0.9), S(0.8), N()];
  assert.deepEqual(caution(firm, summarize(firm), 0), { needs_human_review: false, reason: null });
  const thin = [N(), N()];
  assert.match(caution(thin, summarize(thin), 0).reason ?? "", /None of the abstracts about this claim/);
  const lone = [S(0.55), N()];
  assert.match(caution(lone, summarize(lone), 0).reason ?? "", /Only one abstract takes a side/);
  // One source is not a body of evidence, however confident.
  const loneFirm = [S(0.95), N(), N()];
  assert.match(
    caution(loneFirm, summarize(loneFirm), 0).reason ?? "",
    /^Only one abstract takes a side: the evidence is thin\.$/,
  );
  // The lone decisive abstract counts among those about the claim only.
  const loneAmongOff = [S(0.9), Off(), Off()];
  assert.match(
    caution(loneAmongOff, summarize(loneAmongOff), 0).reason ?? "",
    /Only one abstract takes a side/,
  );
  assert.match(caution([], summarize([]), 0).reason ?? "", /No abstract/);
});

test("assess: a claim out of scope gets no lean and a caution that says why", () => {
  const scope = { in_scope: false, reason: "This claim does not look like a claim about climate." };
  const out = assess([S(0.9), S(0.9)], 0, scope);
  assert.equal(out.summary.lean, "out_of_scope");
  assert.equal(out.summary.lean_confidence, 0);
  assert.match(out.summary.text, /^No lean is given: the claim is outside what ClimateCheck checks\./);
  assert.equal(out.caution.needs_human_review, true);
  assert.match(out.caution.reason ?? "", /^This claim does not look like a claim about climate\./);
});

test("assess: a normative claim (groups 4/5) is flagged even with firm evidence, and its lean is damped", () => {
  const firm = [S(0.9), S(0.9)];
  const below = assess(firm, NORMATIVE_THRESHOLD - 0.01);
  assert.equal(below.caution.needs_human_review, false);
  assert.equal(below.summary.lean_confidence, 0.9);
  const at = assess(firm, 0.7);
  assert.equal(at.caution.needs_human_review, true);
  assert.match(at.caution.reason ?? "", /normative or epistemological.*0\.70/);
  assert.equal(at.summary.lean, "supports");
  assert.equal(at.summary.lean_confidence, 0.27); // 0.9 * (1 - 0.7)
  assert.match(at.summary.text, /^Needs human review: Of 2 abstracts/);
});
