import assert from "node:assert/strict";
import { test } from "node:test";
import {
  canonicalLabel,
  recallAt,
  relevantByClaim,
  scoreNarratives,
  scoreRetrieval,
  scoreTask1,
  scoreTask1ByGroup,
  scoreVerification,
} from "../src/evaluation/metrics.ts";
import {
  formatNarrativeReport,
  formatTask1GroupReport,
  formatTask1Report,
} from "../src/evaluation/report.ts";
import type {
  Label,
  LabelledPair,
  NarrativeExample,
  Task1Prediction,
  Task2Prediction,
} from "../src/types.ts";

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(
    actual !== null && Math.abs(actual - expected) < 1e-9,
    `${what}: got ${actual}, expected ${expected}`,
  );
}

const S: Label = "Supports";
const R: Label = "Refutes";
const N: Label = "Not Enough Information";

const pair = (claimId: string, abstractId: string, label: Label): LabelledPair => ({
  claimId,
  abstractId,
  label,
});
const pred = (claimId: string, abstractId: string, rank: number, label?: string): Task1Prediction => ({
  claimId,
  abstractId,
  rank,
  ...(label === undefined ? {} : { label: label as Label }),
});

// Retrieval fixture.
// c1: relevant a1, a2 (R = 2), NEI a3. c2: relevant b1, NEI b2, never predicted. c3: NEI only (excluded).
// c4: relevant e1 ranked first, no NEI (not in Bpref). cX: not in the gold.
const retrievalGold = [
  pair("c1", "a1", S),
  pair("c1", "a2", R),
  pair("c1", "a3", N),
  pair("c2", "b1", S),
  pair("c2", "b2", N),
  pair("c3", "d1", N),
  pair("c4", "e1", R),
];
// c1 ranking (input deliberately shuffled): a3, z1, a1, z2, z3, a2 (z* unjudged).
const retrievalPreds = [
  pred("c1", "a2", 6),
  pred("c1", "z1", 2),
  pred("cX", "q1", 1),
  pred("c1", "a3", 1),
  pred("c1", "z3", 5),
  pred("c1", "a1", 3),
  pred("c3", "d1", 1),
  pred("c1", "z2", 4),
  pred("c4", "e1", 1),
];

test("recall@K averages over gold claims with a relevant abstract; unpredicted claims count 0, NEI-only ones are excluded", () => {
  const s = scoreRetrieval(retrievalPreds, retrievalGold);
  assert.equal(s.claims_with_relevant, 3); // c1, c2, c4
  close(s.recall_at_2, 1 / 3, "R@2"); // (0 + 0 + 1) / 3
  close(s.recall_at_5, 1 / 2, "R@5"); // (1/2 + 0 + 1) / 3
  close(s.recall_at_10, 2 / 3, "R@10"); // (2/2 + 0 + 1) / 3
  assert.deepEqual(s.unknown_claims, ["cX"]);
});

test("bpref averages over predicted claims with relevant and NEI abstracts; score 1.1 = (R@5 + Bpref) / 2", () => {
  const s = scoreRetrieval(retrievalPreds, retrievalGold);
  // Only c1 qualifies (c2 unpredicted, c3 no relevant, c4 no NEI). R = 2; a3 (NEI) above a1 and a2, z* ignored:
  // (1 - 1/2) + (1 - 1/2) = 1, / R = 1/2.
  assert.equal(s.bpref_claims, 1);
  close(s.bpref, 1 / 2, "bpref");
  close(s.score_1_1, 1 / 2, "score 1.1"); // (1/2 + 1/2) / 2
});

test("nDCG@10 uses binary relevance over the same claims as recall", () => {
  const s = scoreRetrieval(retrievalPreds, retrievalGold);
  // c1: hits at positions 3 and 6 -> (1/log2(4) + 1/log2(7)) / (1 + 1/log2(3)); c2: 0; c4: 1.
  const c1 = (1 / 2 + 1 / Math.log2(7)) / (1 + 1 / Math.log2(3));
  close(s.ndcg_at_10, (c1 + 0 + 1) / 3, "nDCG@10");
});

test("bpref ignores unjudged abstracts, caps n at R and is unchanged by NEI ranked after the last relevant", () => {
  // R = 3 relevant (r1..r3), 4 NEI (n1..n4); u* unjudged.
  const gold = [
    ...["r1", "r2", "r3"].map((a) => pair("c", a, S)),
    ...["n1", "n2", "n3", "n4"].map((a) => pair("c", a, N)),
  ];
  const ranking = ["r1", "n1", "u1", "r2", "n2", "n3", "n4", "r3"];
  const preds = ranking.map((a, i) => pred("c", a, i + 1));
  // r1: n = 0 -> 1; r2: n = 1 (u1 ignored) -> 1 - 1/3; r3: n = min(4, 3) = 3 -> 0. Sum 5/3, / 3 = 5/9.
  close(scoreRetrieval(preds, gold).bpref, 5 / 9, "bpref");
  const after = [...ranking, "u2"].map((a, i) => pred("c", a, i + 1));
  after.splice(1, 0, pred("c", "u0", 1.5)); // another unjudged one between r1 and n1
  close(scoreRetrieval(after, gold).bpref, 5 / 9, "bpref with more unjudged");
  // Only NEI ranked above a relevant abstract count: n1 above r2, n2 below the last relevant.
  const two = [pair("d", "r1", S), pair("d", "r2", R), pair("d", "n1", N), pair("d", "n2", N)];
  const walk = ["r1", "n1", "r2", "n2"].map((a, i) => pred("d", a, i + 1));
  close(scoreRetrieval(walk, two).bpref, 3 / 4, "bpref with NEI after last relevant"); // (1 + (1 - 1/2)) / 2
});

test("bpref is 0 when no claim qualifies", () => {
  const s = scoreRetrieval([pred("c", "a", 1)], [pair("c", "a", S)]); // no NEI judged
  assert.equal(s.bpref_claims, 0);
  assert.equal(s.bpref, 0);
  close(s.score_1_1, 1 / 2, "score 1.1"); // (1 + 0) / 2
});

test("ties in rank keep input order (stable sort)", () => {
  const gold = [pair("c", "a", S)];
  // Sorted: z (1), then y and a tied at 2 in input order.
  const yFirst = [pred("c", "y", 2), pred("c", "a", 2), pred("c", "z", 1)];
  const aFirst = [pred("c", "a", 2), pred("c", "y", 2), pred("c", "z", 1)];
  assert.equal(scoreRetrieval(yFirst, gold).recall_at_2, 0); // z, y | a
  assert.equal(scoreRetrieval(aFirst, gold).recall_at_2, 1); // z, a | y
});

test("an abstract listed twice for a claim keeps only its best place", () => {
  const gold = [pair("c", "a", S), pair("c", "b", S)];
  // x, b in the top 2 (the second x does not take a slot): 1/2 relevant.
  close(
    scoreRetrieval([pred("c", "x", 1), pred("c", "x", 2), pred("c", "b", 3)], gold).recall_at_2,
    1 / 2,
    "R@2",
  );
  // a counts once: 1/2, not 2/2.
  close(scoreRetrieval([pred("c", "a", 1), pred("c", "a", 2)], gold).recall_at_2, 1 / 2, "R@2 dup hit");
});

test("a gold pair listed twice keeps its first label", () => {
  const v = scoreVerification([pred("c", "a", 1, S)], [pair("c", "a", S), pair("c", "a", N)]);
  assert.equal(v.matched_pairs, 1);
  assert.equal(v.confusion.Supports.Supports, 1);
  assert.equal(v.f1_weighted, 1);
});

test("empty inputs give zeros, not NaN", () => {
  const s = scoreRetrieval([], []);
  assert.deepEqual(
    [s.recall_at_2, s.recall_at_5, s.recall_at_10, s.bpref, s.score_1_1, s.ndcg_at_10],
    [0, 0, 0, 0, 0, 0],
  );
  const v = scoreVerification([], []);
  assert.deepEqual([v.matched_pairs, v.precision_weighted, v.recall_weighted, v.f1_weighted], [0, 0, 0, 0]);
  const n = scoreNarratives([], []);
  assert.deepEqual([n.macro_f1, n.micro_f1, n.weighted_f1, n.exact_match], [0, 0, 0, 0]);
});

// Verification fixture: c1 a1 S, a2 R, a3 NEI, a4 S; c2 b1 S, b2 NEI.
const verificationGold = [
  pair("c1", "a1", S),
  pair("c1", "a2", R),
  pair("c1", "a3", N),
  pair("c1", "a4", S),
  pair("c2", "b1", S),
  pair("c2", "b2", N),
];
const verificationPreds = [
  pred("c1", "a1", 1, "supports"), // S -> S
  pred("c1", "a2", 2, "SUPPORTS"), // R -> S
  pred("c1", "a3", 3, "not enough  information"), // NEI -> NEI
  pred("c1", "a4", 4, "Refutes"), // S -> R
  pred("c1", "x9", 5, "Supports"), // not judged: ignored
  pred("c2", "b1", 1, "Supports"), // S -> S
  pred("c2", "b2", 2, "Supports"), // NEI -> S
  pred("cZ", "q", 1, "Refutes"), // unknown claim: ignored
];

test("verification: weighted P/R/F1 over matched pairs, labels compared case-insensitively", () => {
  const v = scoreVerification(verificationPreds, verificationGold);
  assert.equal(v.matched_pairs, 6);
  assert.deepEqual(v.confusion, {
    Supports: { Supports: 2, Refutes: 1, "Not Enough Information": 0 },
    Refutes: { Supports: 1, Refutes: 0, "Not Enough Information": 0 },
    "Not Enough Information": { Supports: 1, Refutes: 0, "Not Enough Information": 1 },
  });
  // Supports: P 2/4, R 2/3, F1 4/7, support 3. Refutes: 0, 0, 0, support 1. NEI: P 1, R 1/2, F1 2/3, support 2.
  assert.deepEqual(Object.keys(v.per_label), [S, R, N]);
  close(v.per_label.Supports?.precision ?? -1, 1 / 2, "P(S)");
  close(v.per_label.Supports?.recall ?? -1, 2 / 3, "R(S)");
  close(v.per_label.Supports?.f1 ?? -1, 4 / 7, "F1(S)");
  assert.equal(v.per_label.Supports?.support, 3);
  assert.deepEqual(v.per_label.Refutes, { precision: 0, recall: 0, f1: 0, support: 1 });
  close(v.per_label[N]?.f1 ?? -1, 2 / 3, "F1(NEI)");
  close(v.precision_weighted, 7 / 12, "P weighted"); // (3·1/2 + 1·0 + 2·1) / 6
  close(v.recall_weighted, 1 / 2, "R weighted"); // (3·2/3 + 0 + 2·1/2) / 6
  close(v.f1_weighted, 32 / 63, "F1 weighted"); // (3·4/7 + 0 + 2·2/3) / 6
});

test("verification: a label only predicted enters with support 0 and weight 0", () => {
  const gold = [pair("c", "a1", S), pair("c", "a2", S)];
  const v = scoreVerification([pred("c", "a1", 1, R), pred("c", "a2", 2, S)], gold);
  assert.deepEqual(Object.keys(v.per_label), [S, R]);
  assert.deepEqual(v.per_label.Refutes, { precision: 0, recall: 0, f1: 0, support: 0 });
  close(v.precision_weighted, 1, "P weighted"); // (2·1 + 0·0) / 2
  close(v.f1_weighted, 2 / 3, "F1 weighted"); // S: P 1, R 1/2, F1 2/3
});

test("canonicalLabel accepts any casing and rejects other labels", () => {
  assert.equal(canonicalLabel(" REFUTES "), R);
  assert.equal(canonicalLabel("not enough information"), N);
  assert.throws(() => canonicalLabel("Disputed"), /unknown label "Disputed"/);
  assert.throws(() => scoreVerification([pred("c", "a", 1, "maybe")], [pair("c", "a", S)]), /maybe/);
});

test("scoreTask1: score 1.2 = weighted F1 + R@5; retrieval-only runs get null verification keys", () => {
  const t = scoreTask1(verificationPreds, verificationGold);
  // R@5: c1 3/3, c2 1/1 -> 1; R@2: c1 2/3 (a1, a2), c2 1 -> 5/6.
  close(t.recall_at_5, 1, "R@5");
  close(t.recall_at_2, 5 / 6, "R@2");
  close(t.f1_weighted, 32 / 63, "F1 weighted");
  close(t.score_1_2, 32 / 63 + 1, "score 1.2");
  assert.deepEqual(t.unknown_claims, ["cZ"]);

  const unlabelled = verificationPreds.map(({ label: _label, ...p }) => p);
  const r = scoreTask1(unlabelled, verificationGold);
  close(r.recall_at_2, 5 / 6, "R@2 without labels");
  assert.equal(r.score_1_2, null);
  assert.equal(r.f1_weighted, null);
  assert.equal(r.per_label, null);
  assert.equal(r.confusion, null);
});

test("scoreTask1ByGroup scores each gold narrative group's claims; a claim in two groups counts in both", () => {
  const narratives: NarrativeExample[] = [
    { id: "c1", text: "", codes: ["1_6", "2_1"] },
    { id: "c2", text: "", codes: ["0_0"] },
  ];
  const groups = scoreTask1ByGroup(verificationPreds, verificationGold, narratives);
  assert.deepEqual(
    groups.map((g) => [g.group, g.claims]),
    [
      [0, 1],
      [1, 1],
      [2, 1],
    ],
  );
  // Group 0 = c2: pairs S->S, NEI->S. S: P 1/2, R 1, F1 2/3; NEI: 0. Weighted F1 = (2/3 + 0) / 2.
  close(groups[0].scores.f1_weighted, 1 / 3, "group 0 F1");
  close(groups[0].scores.recall_at_2, 1, "group 0 R@2");
  // Groups 1 and 2 = c1: S->S, R->S, NEI->NEI, S->R. S: P 1/2, R 1/2, F1 1/2 (support 2); R: 0; NEI: 1.
  // Weighted F1 = (2·1/2 + 0 + 1·1) / 4 = 1/2. R@2 = 2/3.
  for (const g of groups.slice(1)) {
    close(g.scores.f1_weighted, 1 / 2, `group ${g.group} F1`);
    close(g.scores.recall_at_2, 2 / 3, `group ${g.group} R@2`);
    assert.deepEqual(g.scores.unknown_claims, []);
  }
});

// Narrative fixture.
const narrativeGold: NarrativeExample[] = [
  { id: "g1", text: "", codes: ["1_6"] },
  { id: "g2", text: "", codes: ["2_1", "2_3"] },
  { id: "g3", text: "", codes: ["0_0"] },
  { id: "g4", text: "", codes: ["4_1"] },
  { id: "g5", text: "", codes: ["5_2"] }, // no prediction
];
const narrativePreds: Task2Prediction[] = [
  { claimId: "g1", codes: ["1_6"] }, // exact
  { claimId: "g2", codes: ["2_1"] }, // right group
  { claimId: "g3", codes: ["1_6"] }, // wrong group
  { claimId: "g4", codes: ["4_2", "4_1"] }, // right group
  { claimId: "gX", codes: ["3_1"] }, // unknown claim: ignored
];

test("narratives: per-code, macro, micro and weighted scores; never-predicted codes enter macro with F1 0", () => {
  const s = scoreNarratives(narrativePreds, narrativeGold);
  assert.equal(s.claims, 5);
  assert.deepEqual(s.unknown_claims, ["gX"]);
  // Labels: gold ∪ predicted, taxonomy order; 3_1 (unknown claim only) is not among them.
  assert.deepEqual(Object.keys(s.per_label), ["0_0", "1_6", "2_1", "2_3", "4_1", "4_2", "5_2"]);
  // 1_6: TP 1 (g1), FP 1 (g3) -> P 1/2, R 1, F1 2/3.
  close(s.per_label["1_6"].precision, 1 / 2, "P(1_6)");
  close(s.per_label["1_6"].f1, 2 / 3, "F1(1_6)");
  assert.deepEqual(s.per_label["2_3"], { precision: 0, recall: 0, f1: 0, support: 1 });
  assert.deepEqual(s.per_label["4_2"], { precision: 0, recall: 0, f1: 0, support: 0 });
  close(s.macro_precision, 5 / 14, "macro P"); // (1/2 + 1 + 1) / 7
  close(s.macro_recall, 3 / 7, "macro R"); // (1 + 1 + 1) / 7
  close(s.macro_f1, 8 / 21, "macro F1"); // (2/3 + 1 + 1) / 7
  // TP 3 (1_6, 2_1, 4_1), FP 2 (1_6 on g3, 4_2), FN 3 (2_3, 0_0, 5_2).
  close(s.micro_precision, 3 / 5, "micro P");
  close(s.micro_recall, 1 / 2, "micro R");
  close(s.micro_f1, 6 / 11, "micro F1"); // 2·(3/5)(1/2) / (3/5 + 1/2)
  close(s.weighted_f1, 4 / 9, "weighted F1"); // (2/3 + 1 + 1) / 6 gold codes
  close(s.exact_match, 1 / 5, "exact match"); // g1 only
});

test("narratives at group level collapse codes to their group digit", () => {
  const g = scoreNarratives(narrativePreds, narrativeGold).group;
  // Gold/pred groups: g1 {1}/{1}, g2 {2}/{2}, g3 {0}/{1}, g4 {4}/{4}, g5 {5}/{}.
  assert.deepEqual(Object.keys(g.per_label), ["0", "1", "2", "4", "5"]);
  assert.deepEqual(g.per_label["2"], { precision: 1, recall: 1, f1: 1, support: 1 }); // 2_1 + 2_3 -> one "2"
  close(g.macro_precision, 1 / 2, "macro P"); // (0 + 1/2 + 1 + 1 + 0) / 5
  close(g.macro_recall, 3 / 5, "macro R");
  close(g.macro_f1, 8 / 15, "macro F1"); // (2/3 + 1 + 1) / 5
  close(g.micro_f1, 2 / 3, "micro F1"); // TP 3, FP 1, FN 2: 2·(3/4)(3/5) / (3/4 + 3/5)
  close(g.weighted_f1, 8 / 15, "weighted F1"); // (2/3 + 1 + 1) / 5
  close(g.exact_match, 3 / 5, "exact match"); // g1, g2, g4
});

test("narrative error split: exact, right group wrong code, wrong group (missing prediction = empty set)", () => {
  const s = scoreNarratives(narrativePreds, narrativeGold);
  // g1 exact; g2 and g4 right group; g3 (0 vs 1) and g5 (nothing predicted) wrong group.
  assert.deepEqual(s.errors, { exact: 1, right_group: 2, wrong_group: 2 });
});

test("narratives: an unknown code throws", () => {
  assert.throws(() => scoreNarratives([{ claimId: "g1", codes: ["9_9"] }], narrativeGold), /9_9/);
});

test("formatTask1Report shows the key figures, the per-label table and the confusion matrix", () => {
  const text = formatTask1Report(scoreTask1(verificationPreds, verificationGold));
  assert.match(text, /^Recall@2\s+0\.8333$/m); // 5/6
  assert.match(text, /^Recall@5\s+1\.0000$/m);
  assert.match(text, /^F1 \(weighted\)\s+0\.5079$/m); // 32/63
  assert.match(text, /^Score 1\.2\s+1\.5079$/m); // 95/63
  assert.match(text, /^Supports\s+0\.5000\s+0\.6667\s+0\.5714\s+3$/m);
  assert.match(text, /^Not Enough Information\s+1\s+0\s+1$/m); // confusion row: gold NEI
  // Claims not in the gold are the command's one warning on stderr, not repeated in the report.
  assert.doesNotMatch(text, /not in the gold/);
  const unlabelled = formatTask1Report(scoreTask1(retrievalPreds, retrievalGold));
  assert.match(unlabelled, /no labels in the predictions/);
  assert.match(unlabelled, /^Bpref\s+0\.5000$/m);
});

test("formatTask1GroupReport and formatNarrativeReport show one row per group and the error split", () => {
  const narratives: NarrativeExample[] = [{ id: "c1", text: "", codes: ["1_6"] }];
  const groups = formatTask1GroupReport(scoreTask1ByGroup(verificationPreds, verificationGold, narratives));
  assert.match(groups, /^1\s+1\s+1\.0000\s+/m);
  const text = formatNarrativeReport(scoreNarratives(narrativePreds, narrativeGold));
  assert.match(text, /^Macro F1\s+0\.3810$/m); // 8/21
  assert.match(text, /^Right group, wrong code\s+2\s+40\.0%$/m);
  assert.match(text, /^1_6\s+0\.5000\s+1\.0000\s+0\.6667\s+1$/m);
});

test("recallAt at any depth: scoreRetrieval's Recall@2/5/10 at those depths; relevantByClaim skips NEI-only claims", () => {
  const s = scoreRetrieval(retrievalPreds, retrievalGold);
  close(recallAt(retrievalPreds, retrievalGold, 2), s.recall_at_2, "R@2");
  close(recallAt(retrievalPreds, retrievalGold, 5), s.recall_at_5, "R@5");
  close(recallAt(retrievalPreds, retrievalGold, 10), s.recall_at_10, "R@10");
  const gold: LabelledPair[] = [
    { claimId: "a", abstractId: "x", label: "Supports" },
    { claimId: "a", abstractId: "y", label: "Refutes" },
    { claimId: "b", abstractId: "z", label: "Not Enough Information" },
  ];
  assert.deepEqual([...relevantByClaim(gold)], [["a", new Set(["x", "y"])]]);
  const preds = [
    { claimId: "a", abstractId: "y", rank: 2 },
    { claimId: "a", abstractId: "q", rank: 1 },
    { claimId: "a", abstractId: "x", rank: 3 },
  ];
  assert.equal(recallAt(preds, gold, 1), 0);
  assert.equal(recallAt(preds, gold, 2), 0.5);
  assert.equal(recallAt(preds, gold, 3), 1);
});
