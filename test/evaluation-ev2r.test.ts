import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AbstractText,
  type Judge,
  neededAbstracts,
  planEv2r,
  scoreEv2r,
} from "../src/evaluation/ev2r.ts";
import type { Label, LabelledPair, Task1Prediction } from "../src/types.ts";
import type { LabelProbs, VerifyPair } from "../src/verification/verifier.ts";

/** Texts are `;`-joined facts; a fact is supported when the evidence lists it verbatim. */
const factCalls = new Map<string, number>();
const judge: Judge = {
  name: "test-judge",
  async atomicFacts(doc) {
    factCalls.set(doc.abstract, (factCalls.get(doc.abstract) ?? 0) + 1);
    return doc.abstract.split(";");
  },
  async supported(facts, evidence) {
    const have = new Set(evidence.abstract.split(";"));
    return facts.map((f) => have.has(f));
  },
};

/** Verifier probabilities by "claim|abstract text". */
const PROBS: Record<string, LabelProbs> = {
  "C1|a;b;z;w": { supports: 0.6, refutes: 0.1, nei: 0.3 },
  "C1|d;q": { supports: 0.2, refutes: 0.7, nei: 0.1 },
  "C5|m;m;n": { supports: 0.9, refutes: 0.05, nei: 0.05 },
};
const verifier = {
  name: "test-verifier",
  async verifyPairs(pairs: readonly VerifyPair[]) {
    return pairs.map((p) => {
      const probs = PROBS[`${p.claim}|${p.abstract}`];
      assert.ok(probs, `unexpected pair ${p.claim} / ${p.abstract}`);
      return { label: "Supports" as Label, confidence: 0, probs, rationale: [] };
    });
  },
};

const TEXTS: Record<string, string> = {
  G1: "a;b;c",
  G2: "d;e",
  G3: "x",
  R1: "a;b;z;w",
  R2: "d;q",
  G6: "m;n",
  G7: "n;m",
  R3: "m;m;n",
  N1: "n1",
  G4: "g4",
  G5: "g5",
};
const abstracts = new Map<string, AbstractText>(
  Object.entries(TEXTS).map(([id, t]) => [id, { abstract: t }]),
);
const claims = new Map(["C1", "C2", "C3", "C4", "C5"].map((c) => [c.toLowerCase(), c]));

const g = (claimId: string, abstractId: string, label: Label): LabelledPair => ({
  claimId,
  abstractId,
  label,
});
const GOLD: LabelledPair[] = [
  g("c1", "G1", "Supports"),
  g("c1", "G2", "Refutes"),
  g("c1", "G3", "Not Enough Information"),
  g("c2", "N1", "Not Enough Information"), // all NEI: excluded
  g("c3", "G4", "Supports"), // everything it retrieved is annotated: excluded
  g("c4", "G5", "Supports"), // no predictions: excluded
  g("c5", "G6", "Refutes"), // G6 and G7 align equally with R3: the first (G6, Refutes) wins
  g("c5", "G7", "Supports"),
];
const p = (claimId: string, abstractId: string, rank: number, label?: Label): Task1Prediction =>
  label ? { claimId, abstractId, rank, label } : { claimId, abstractId, rank };
const PREDS: Task1Prediction[] = [
  p("c1", "G1", 1, "Supports"),
  p("c1", "R1", 2, "Supports"),
  p("c1", "R2", 3, "Supports"),
  p("c2", "N1", 1, "Supports"),
  p("c2", "R1", 2, "Supports"),
  p("c3", "G4", 1, "Supports"),
  p("c5", "R3", 1),
];

const close = (actual: number | null, expected: number, what: string) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${what}: ${actual} != ${expected}`);

test("ev2r: S_ref from atomic-fact F1, S_proxy from the gold label of the best gold abstract, by hand", async () => {
  factCalls.clear();
  const { scores, pairs } = await scoreEv2r({
    claims,
    gold: GOLD,
    predictions: PREDS,
    abstracts,
    judge,
    verifier,
  });
  const byId = new Map(pairs.map((x) => [`${x.claimId}/${x.abstractId}`, x]));
  assert.deepEqual([...byId.keys()], ["c1/R1", "c1/R2", "c5/R3"]);

  // R1 vs G1: 2 of R1's 4 facts in G1 (P = 1/2), 2 of G1's 3 in R1 (R = 2/3), F1 = 4/7; G2 and G3 share nothing.
  const r1 = byId.get("c1/R1");
  assert.equal(r1?.bestGold, "G1");
  assert.equal(r1?.bestGoldLabel, "Supports");
  close(r1?.precision ?? null, 0.5, "precision");
  close(r1?.recall ?? null, 2 / 3, "recall");
  close(r1?.sRef ?? null, 4 / 7, "S_ref");
  close(r1?.sProxy ?? null, 0.6, "S_proxy = P(Supports)");
  close(r1?.ev2r ?? null, 0.5 * (4 / 7) + 0.5 * 0.6, "Ev2R");
  // S_ver: y^ = Supports = y*: 0.5 * 0.6 + 0.5.
  close(r1?.sVer ?? null, 0.8, "S_ver");

  // R2 vs G2: P = 1/2, R = 1/2; y* = Refutes -> S_proxy 0.7; y^ = Supports != y*: S_ver = 0.5 * 0.2.
  const r2 = byId.get("c1/R2");
  assert.equal(r2?.bestGold, "G2");
  close(r2?.sRef ?? null, 0.5, "S_ref R2");
  close(r2?.ev2r ?? null, 0.6, "Ev2R R2");
  close(r2?.sVer ?? null, 0.1, "S_ver R2");

  // Tie: G6 and G7 both align perfectly with R3; the first in the gold (G6, Refutes) is g*.
  const r3 = byId.get("c5/R3");
  assert.equal(r3?.bestGold, "G6");
  assert.equal(r3?.bestGoldLabel, "Refutes");
  close(r3?.ev2r ?? null, 0.5 + 0.5 * 0.05, "Ev2R R3");
  assert.equal(r3?.sVer, null);

  // Claims: c1 = max(0.5857, 0.6) = 0.6 (R2), c5 = 0.525.
  close(scores.ev2r, (0.6 + 0.525) / 2, "ev2r");
  assert.equal(scores.ev2r_claims, 2);
  assert.equal(scores.ev2r_pairs, 3);
  close(scores.ev2r_ref, (0.5 + 1) / 2, "ev2r_ref");
  close(scores.ev2r_proxy, (0.7 + 0.05) / 2, "ev2r_proxy");
  assert.deepEqual(scores.ev2r_excluded, { all_nei: 1, no_predictions: 1, all_retrieved_annotated: 1 });
  // Automatic verification over the two labelled pairs.
  close(scores.auto_verification, (0.8 + 0.1) / 2, "auto_verification");
  assert.equal(scores.auto_verification_pairs, 2);
  close(scores.auto_verification_prob, (0.6 + 0.2) / 2, "P(y^)");
  close(scores.auto_verification_agreement, 0.5, "agreement");
  assert.equal(scores.auto_verification_note, null);
  assert.equal(scores.ev2r_judge, "test-judge");
  assert.equal(scores.ev2r_verifier, "test-verifier");
  // Each abstract's facts are asked once, although G1, G2 and G3 are compared with two retrieved abstracts.
  for (const [text, n] of factCalls) assert.equal(n, 1, text);
  assert.equal(factCalls.get("a;b;c"), 1);
});

test("ev2r: the tie rule follows gold file order", async () => {
  const swapped = GOLD.filter((x) => x.claimId === "c5").reverse();
  const { scores, pairs } = await scoreEv2r({
    claims,
    gold: swapped,
    predictions: PREDS,
    abstracts,
    judge,
    verifier,
  });
  assert.equal(pairs[0].bestGold, "G7");
  assert.equal(pairs[0].bestGoldLabel, "Supports");
  close(scores.ev2r, 0.5 + 0.5 * 0.9, "ev2r with G7 first");
});

test("ev2r: exclusions and the texts needed", () => {
  const plan = planEv2r(GOLD, PREDS);
  assert.deepEqual(
    plan.claims.map((c) => c.claimId),
    ["c1", "c5"],
  );
  assert.deepEqual(plan.excluded, { all_nei: 1, no_predictions: 1, all_retrieved_annotated: 1 });
  // c2's R1 is not needed: c2 is excluded (all NEI). The gold NEI abstract G3 of c1 still is.
  assert.deepEqual([...neededAbstracts(plan.claims)].sort(), [
    "G1",
    "G2",
    "G3",
    "G6",
    "G7",
    "R1",
    "R2",
    "R3",
  ]);
});

test("ev2r: a retrieval-only run has no automatic verification, with the reason", async () => {
  const unlabelled = PREDS.map(({ label: _l, ...rest }) => rest);
  const { scores } = await scoreEv2r({
    claims,
    gold: GOLD,
    predictions: unlabelled,
    abstracts,
    judge,
    verifier,
  });
  assert.equal(scores.auto_verification, null);
  assert.equal(scores.auto_verification_pairs, 0);
  assert.match(scores.auto_verification_note ?? "", /no label column/);
  close(scores.ev2r, (0.6 + 0.525) / 2, "ev2r does not need labels");
});

test("ev2r: no claim qualifies -> null score, not 0", async () => {
  const { scores } = await scoreEv2r({
    claims,
    gold: GOLD.filter((x) => x.claimId === "c2" || x.claimId === "c3"),
    predictions: PREDS,
    abstracts,
    judge,
    verifier,
  });
  assert.equal(scores.ev2r, null);
  assert.equal(scores.ev2r_claims, 0);
  assert.deepEqual(scores.ev2r_excluded, { all_nei: 1, no_predictions: 0, all_retrieved_annotated: 1 });
});

test("ev2r: a scored claim without text is an error", async () => {
  await assert.rejects(
    scoreEv2r({ claims: new Map(), gold: GOLD, predictions: PREDS, abstracts, judge, verifier }),
    /no text for claim c1/,
  );
});
