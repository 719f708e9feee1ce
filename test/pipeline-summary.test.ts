import assert from "node:assert/strict";
import { test } from "node:test";
import type { Evidence } from "../src/pipeline/result.ts";
import { assess, caution, NORMATIVE_THRESHOLD, summarize } from "../src/pipeline/summary.ts";
import type { Label } from "../src/types.ts";

let n = 0;
function ev(label: Label, confidence: number): Evidence {
  n++;
  return {
    abstract_id: `a${n}`,
    title: null,
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
  };
}
const S = (c: number) => ev("Supports", c);
const R = (c: number) => ev("Refutes", c);
const N = (c = 0.7) => ev("Not Enough Information", c);

test("summarize: the lean goes to the side with at least 75% of the decisive confidence", () => {
  const s = summarize([S(0.9), S(0.7), R(0.4), N(), N()]);
  assert.deepEqual([s.supports, s.refutes, s.nei, s.lean], [2, 1, 2, "supports"]);
  // share 1.6 / 2.0 = 0.8, mean Supports confidence 0.8
  assert.equal(s.lean_confidence, 0.64);
  assert.match(s.text, /^Of 5 abstracts, 2 support the claim, 1 refutes it and 2 do not say enough\./);
  assert.match(s.text, /leans towards supporting/);

  const r = summarize([R(0.9), N()]);
  assert.equal(r.lean, "refutes");
  assert.equal(r.lean_confidence, 0.9);

  const m = summarize([S(0.8), R(0.6)]);
  assert.equal(m.lean, "mixed");
  assert.equal(m.lean_confidence, 0.429); // minority share 0.6 / 1.4

  const i = summarize([N(), N()]);
  assert.deepEqual([i.lean, i.lean_confidence], ["insufficient", 0]);
  assert.equal(summarize([]).text, "No abstract was found for this claim.");
});

test("caution: thin, lone-weak and mixed evidence need review; firm evidence does not", () => {
  const firm = [S(0.9), S(0.8), N()];
  assert.deepEqual(caution(firm, summarize(firm), 0), { needs_human_review: false, reason: null });
  const thin = [N(), N()];
  assert.match(caution(thin, summarize(thin), 0).reason ?? "", /None of the abstracts/);
  const lone = [S(0.55), N()];
  assert.match(caution(lone, summarize(lone), 0).reason ?? "", /Only one abstract/);
  const loneFirm = [S(0.65), N()];
  assert.equal(caution(loneFirm, summarize(loneFirm), 0).needs_human_review, false);
  const mixed = [S(0.8), R(0.8)];
  assert.match(caution(mixed, summarize(mixed), 0).reason ?? "", /disagree/);
  assert.match(caution([], summarize([]), 0).reason ?? "", /No abstract/);
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
