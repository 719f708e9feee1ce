/**
 * The ClimateCheck 2026 metrics, as pure functions over the plain types of src/types.ts. They follow the
 * organisers' scoring program: task 1.1 Recall@K and Bpref (Score 1.1), task 1.2 weighted P/R/F1 (Score 1.2),
 * task 2 multi-label P/R/F1 over CARDS codes and over their groups. nDCG@10 is ours, for benchmarks only.
 *
 * Input conventions shared by all functions:
 * - A claim's ranking is its predictions sorted by `rank` ascending with a stable sort (ties keep input order);
 *   an abstract listed twice for a claim keeps only its first place in that ranking.
 * - A gold pair listed twice keeps its first label; gold codes listed for a claim twice are united.
 * - Predictions for claims absent from the gold are ignored and listed in `unknown_claims`.
 */
import { GROUPS, type Group, groupOf, NARRATIVE_CODES, narrativeInfo } from "../taxonomy/cards.ts";
import {
  LABELS,
  type Label,
  type LabelledPair,
  type NarrativeExample,
  NEI,
  parseLabel,
  type Task1Prediction,
  type Task2Prediction,
} from "../types.ts";

/** Precision, recall and F1 of one label; support = its number of gold occurrences. */
export interface Prf {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface RetrievalScores {
  recall_at_2: number;
  recall_at_5: number;
  recall_at_10: number;
  bpref: number;
  /** (Recall@5 + Bpref) / 2. */
  score_1_1: number;
  /** Ours, not official: nDCG@10 with binary relevance, averaged over the same claims as recall. */
  ndcg_at_10: number;
  /** Gold claims with at least one Supports/Refutes abstract: the denominator of recall and nDCG. */
  claims_with_relevant: number;
  /** Predicted gold claims with at least one relevant and one NEI abstract: the denominator of Bpref. */
  bpref_claims: number;
  /** Claim ids predicted but absent from the gold, in order of first appearance. */
  unknown_claims: string[];
}

/** gold label -> predicted label -> number of pairs; always all three labels. */
export type Confusion = Record<Label, Record<Label, number>>;

export interface VerificationScores {
  /** Predicted labelled pairs whose (claim, abstract) is in the gold: the pairs that are scored. */
  matched_pairs: number;
  precision_weighted: number;
  recall_weighted: number;
  f1_weighted: number;
  /** Labels occurring among the matched pairs (gold or predicted), in the order of LABELS. */
  per_label: Partial<Record<Label, Prf>>;
  confusion: Confusion;
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

/**
 * Task 1 scores. Verification keys and `score_1_2` are null for a retrieval-only run (no prediction has a
 * label); a run with labels but no matched pair scores 0 instead.
 */
export type Task1Scores = RetrievalScores &
  Nullable<VerificationScores> & {
    /** Weighted F1 + Recall@5. */
    score_1_2: number | null;
  };

export interface Task1GroupScores {
  group: Group;
  /** Gold claims (task 1 gold) whose gold narrative codes include this group. */
  claims: number;
  scores: Task1Scores;
}

/** Multi-label scores over one label space (CARDS codes, or group digits). */
export interface MultiLabelScores {
  /** Unweighted means over the labels of the union of gold and predicted labels. */
  macro_precision: number;
  macro_recall: number;
  macro_f1: number;
  /** From TP, FP and FN summed over labels. */
  micro_precision: number;
  micro_recall: number;
  micro_f1: number;
  /** Per-label F1 weighted by gold support. */
  weighted_f1: number;
  /** Share of gold claims whose predicted set equals the gold set. */
  exact_match: number;
  /** Keyed by code (or group digit), in taxonomy order. */
  per_label: Record<string, Prf>;
}

/**
 * Error split over gold claims, on code sets (a missing prediction is the empty set):
 * - exact: the predicted code set equals the gold code set;
 * - right_group: not exact, but the set of predicted groups equals the set of gold groups
 *   (e.g. gold {1_6}, predicted {1_7} or {1_6, 1_0});
 * - wrong_group: every other case (including an empty prediction).
 */
export interface NarrativeErrors {
  exact: number;
  right_group: number;
  wrong_group: number;
}

export interface NarrativeScores extends MultiLabelScores {
  /** Gold claims scored. */
  claims: number;
  /** The same metrics with every code mapped to its group digit ("0" to "5"). */
  group: MultiLabelScores;
  errors: NarrativeErrors;
  /** Claim ids predicted but absent from the gold, in order of first appearance. */
  unknown_claims: string[];
}

/** A task 1 label compared case-insensitively (inner whitespace collapsed); throws on anything else. */
export function canonicalLabel(raw: string): Label {
  const label = parseLabel(raw);
  if (!label) throw new Error(`unknown label "${raw}" (expected one of ${LABELS.join(", ")})`);
  return label;
}

/** Claim -> abstract -> canonical gold label. */
export function goldByClaim(gold: readonly LabelledPair[]): Map<string, Map<string, Label>> {
  const byClaim = new Map<string, Map<string, Label>>();
  for (const g of gold) {
    const judged = byClaim.get(g.claimId) ?? new Map<string, Label>();
    if (!judged.has(g.abstractId)) judged.set(g.abstractId, canonicalLabel(g.label));
    byClaim.set(g.claimId, judged);
  }
  return byClaim;
}

/** Claim -> its relevant abstracts (gold Supports or Refutes); claims without one are absent. */
export function relevantByClaim(gold: readonly LabelledPair[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [claim, judged] of goldByClaim(gold)) {
    const relevant = new Set([...judged].filter(([, l]) => l !== NEI).map(([a]) => a));
    if (relevant.size > 0) out.set(claim, relevant);
  }
  return out;
}

/**
 * Recall at any depth k: the mean over claims with a relevant abstract of the share of them in the claim's top k
 * (the ranking rule of scoreRetrieval, whose Recall@2/5/10 are this at k = 2, 5, 10).
 */
export function recallAt(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
  k: number,
): number {
  const ranked = rankings(preds);
  const relevant = relevantByClaim(gold);
  let sum = 0;
  for (const [claim, rel] of relevant) {
    const hits = (ranked.get(claim) ?? []).slice(0, k).filter((p) => rel.has(p.abstractId)).length;
    sum += hits / rel.size;
  }
  return mean(sum, relevant.size);
}

/** Claim -> its ranking (stable sort by rank, first occurrence of an abstract kept), claims in first-seen order. */
export function rankings(preds: readonly Task1Prediction[]): Map<string, Task1Prediction[]> {
  const byClaim = new Map<string, Task1Prediction[]>();
  for (const p of preds) {
    const list = byClaim.get(p.claimId);
    if (list) list.push(p);
    else byClaim.set(p.claimId, [p]);
  }
  for (const [claim, list] of byClaim) {
    // Array.prototype.sort is stable (ES2019), which gives the tie rule.
    const seen = new Set<string>();
    const ranked = [...list]
      .sort((a, b) => a.rank - b.rank)
      .filter((p) => !seen.has(p.abstractId) && seen.add(p.abstractId));
    byClaim.set(claim, ranked);
  }
  return byClaim;
}

const unknownClaims = (predicted: Iterable<string>, gold: { has(id: string): boolean }): string[] =>
  [...predicted].filter((c) => !gold.has(c));

const mean = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

/** Bpref of one ranking: each relevant adds 1 - min(n, R) / R, n = NEI-judged above it; unjudged ignored. */
function bprefOf(ranking: readonly Task1Prediction[], judged: Map<string, Label>, relevant: number): number {
  let nonRelevantAbove = 0;
  let seen = 0;
  let sum = 0;
  for (const p of ranking) {
    if (seen === relevant) break;
    const label = judged.get(p.abstractId);
    if (label === undefined) continue;
    if (label === NEI) nonRelevantAbove++;
    else {
      seen++;
      sum += 1 - Math.min(nonRelevantAbove, relevant) / relevant;
    }
  }
  return sum / relevant;
}

/** Binary-relevance nDCG@10 of one ranking. */
function ndcgAt10(ranking: readonly Task1Prediction[], relevant: Set<string>): number {
  let dcg = 0;
  ranking.slice(0, 10).forEach((p, i) => {
    if (relevant.has(p.abstractId)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(relevant.size, 10); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** Task 1.1: Recall@2/5/10 and Bpref (relevant = gold Supports or Refutes), Score 1.1, and our nDCG@10. */
export function scoreRetrieval(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
): RetrievalScores {
  const judgedByClaim = goldByClaim(gold);
  const ranked = rankings(preds);
  const ks = [2, 5, 10] as const;
  const recallSums = [0, 0, 0];
  let ndcgSum = 0;
  let withRelevant = 0;
  let bprefSum = 0;
  let bprefClaims = 0;
  for (const [claim, judged] of judgedByClaim) {
    const relevant = new Set([...judged].filter(([, l]) => l !== NEI).map(([a]) => a));
    if (relevant.size === 0) continue;
    withRelevant++;
    const ranking = ranked.get(claim) ?? [];
    ks.forEach((k, i) => {
      const hits = ranking.slice(0, k).filter((p) => relevant.has(p.abstractId)).length;
      recallSums[i] += hits / relevant.size;
    });
    ndcgSum += ndcgAt10(ranking, relevant);
    // Bpref only averages over claims the run predicted that also have an NEI-judged (non-relevant) abstract.
    if (ranking.length > 0 && relevant.size < judged.size) {
      bprefClaims++;
      bprefSum += bprefOf(ranking, judged, relevant.size);
    }
  }
  const recall_at_5 = mean(recallSums[1], withRelevant);
  const bpref = mean(bprefSum, bprefClaims);
  return {
    recall_at_2: mean(recallSums[0], withRelevant),
    recall_at_5,
    recall_at_10: mean(recallSums[2], withRelevant),
    bpref,
    score_1_1: (recall_at_5 + bpref) / 2,
    ndcg_at_10: mean(ndcgSum, withRelevant),
    claims_with_relevant: withRelevant,
    bpref_claims: bprefClaims,
    unknown_claims: unknownClaims(ranked.keys(), judgedByClaim),
  };
}

/**
 * Task 1.1 scores of each claim with a relevant abstract, in gold order: the means of their recalls and nDCG
 * (and of Bpref over those with bpref_claims 1) are scoreRetrieval's figures, so claims can be resampled.
 */
export function scoreRetrievalPerClaim(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
): { claimId: string; scores: RetrievalScores }[] {
  const predsOf = new Map<string, Task1Prediction[]>();
  for (const p of preds) {
    const l = predsOf.get(p.claimId);
    if (l) l.push(p);
    else predsOf.set(p.claimId, [p]);
  }
  const goldOf = new Map<string, LabelledPair[]>();
  for (const g of gold) {
    const l = goldOf.get(g.claimId);
    if (l) l.push(g);
    else goldOf.set(g.claimId, [g]);
  }
  const out: { claimId: string; scores: RetrievalScores }[] = [];
  for (const [claimId, g] of goldOf) {
    const scores = scoreRetrieval(predsOf.get(claimId) ?? [], g);
    if (scores.claims_with_relevant === 1) out.push({ claimId, scores });
  }
  return out;
}

const prf = (tp: number, fp: number, fn: number): Prf => {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, support: tp + fn };
};

/**
 * Task 1.2: over predicted labelled pairs whose (claim, abstract) is in the gold, per-label P/R/F1 averaged
 * weighted by gold support (sklearn `average="weighted"`, zero_division=0), plus the confusion matrix.
 */
export function scoreVerification(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
): VerificationScores {
  const judgedByClaim = goldByClaim(gold);
  const confusion = Object.fromEntries(
    LABELS.map((g) => [g, Object.fromEntries(LABELS.map((p) => [p, 0]))]),
  ) as Confusion;
  let matched = 0;
  for (const [claim, ranking] of rankings(preds)) {
    const judged = judgedByClaim.get(claim);
    for (const p of ranking) {
      const goldLabel = judged?.get(p.abstractId);
      if (goldLabel === undefined || p.label === undefined) continue;
      confusion[goldLabel][canonicalLabel(p.label)]++;
      matched++;
    }
  }
  const per_label: Partial<Record<Label, Prf>> = {};
  let precision = 0;
  let recall = 0;
  let f1 = 0;
  for (const label of LABELS) {
    const tp = confusion[label][label];
    const support = LABELS.reduce((s, p) => s + confusion[label][p], 0);
    const predicted = LABELS.reduce((s, g) => s + confusion[g][label], 0);
    if (support === 0 && predicted === 0) continue;
    const scores = prf(tp, predicted - tp, support - tp);
    per_label[label] = scores;
    precision += scores.precision * support;
    recall += scores.recall * support;
    f1 += scores.f1 * support;
  }
  return {
    matched_pairs: matched,
    precision_weighted: mean(precision, matched),
    recall_weighted: mean(recall, matched),
    f1_weighted: mean(f1, matched),
    per_label,
    confusion,
  };
}

/** Task 1 in full: retrieval, and verification with Score 1.2 when the run has labels (else null). */
export function scoreTask1(preds: readonly Task1Prediction[], gold: readonly LabelledPair[]): Task1Scores {
  const retrieval = scoreRetrieval(preds, gold);
  if (!preds.some((p) => p.label !== undefined)) {
    return {
      ...retrieval,
      matched_pairs: null,
      precision_weighted: null,
      recall_weighted: null,
      f1_weighted: null,
      per_label: null,
      confusion: null,
      score_1_2: null,
    };
  }
  const verification = scoreVerification(preds, gold);
  return { ...retrieval, ...verification, score_1_2: verification.f1_weighted + retrieval.recall_at_5 };
}

/**
 * Task 1 scores per gold narrative group: the claims of a group are the task 1 gold claims whose gold codes
 * (from `narratives`, id = claim id) include a code of that group; a claim in two groups counts in both, `0_0`
 * is group 0, claims without narrative codes are in no group. Only groups with at least one claim, in order.
 */
export function scoreTask1ByGroup(
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
  narratives: readonly NarrativeExample[],
): Task1GroupScores[] {
  const groupsOf = new Map<string, Set<Group>>();
  for (const n of narratives) {
    const groups = groupsOf.get(n.id) ?? new Set<Group>();
    for (const code of n.codes) groups.add(groupOf(code));
    groupsOf.set(n.id, groups);
  }
  const goldClaims = new Set(gold.map((g) => g.claimId));
  const out: Task1GroupScores[] = [];
  for (const group of GROUPS) {
    const claims = new Set([...goldClaims].filter((c) => groupsOf.get(c)?.has(group)));
    if (claims.size === 0) continue;
    const scores = scoreTask1(
      preds.filter((p) => claims.has(p.claimId)),
      gold.filter((g) => claims.has(g.claimId)),
    );
    out.push({ group, claims: claims.size, scores });
  }
  return out;
}

interface SetPair {
  gold: Set<string>;
  pred: Set<string>;
}

const sameSet = (a: Set<string>, b: Set<string>): boolean =>
  a.size === b.size && [...a].every((x) => b.has(x));

/** Multi-label P/R/F1 over the union of gold and predicted labels, labels sorted by `order`. */
function multiLabel(pairs: readonly SetPair[], order: (a: string, b: string) => number): MultiLabelScores {
  const counts = new Map<string, { tp: number; fp: number; fn: number }>();
  const count = (label: string) => {
    const c = counts.get(label) ?? { tp: 0, fp: 0, fn: 0 };
    counts.set(label, c);
    return c;
  };
  let exact = 0;
  for (const { gold, pred } of pairs) {
    for (const l of gold) {
      if (pred.has(l)) count(l).tp++;
      else count(l).fn++;
    }
    for (const l of pred) if (!gold.has(l)) count(l).fp++;
    if (sameSet(gold, pred)) exact++;
  }
  const per_label: Record<string, Prf> = {};
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let macroP = 0;
  let macroR = 0;
  let macroF = 0;
  let weightedF = 0;
  for (const label of [...counts.keys()].sort(order)) {
    const c = counts.get(label) as { tp: number; fp: number; fn: number };
    const s = prf(c.tp, c.fp, c.fn);
    per_label[label] = s;
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
    macroP += s.precision;
    macroR += s.recall;
    macroF += s.f1;
    weightedF += s.f1 * s.support;
  }
  const micro = prf(tp, fp, fn);
  return {
    macro_precision: mean(macroP, counts.size),
    macro_recall: mean(macroR, counts.size),
    macro_f1: mean(macroF, counts.size),
    micro_precision: micro.precision,
    micro_recall: micro.recall,
    micro_f1: micro.f1,
    weighted_f1: mean(weightedF, tp + fn),
    exact_match: mean(exact, pairs.length),
    per_label,
  };
}

const CODE_ORDER = new Map(NARRATIVE_CODES.map((c, i) => [c, i]));
const byCode = (a: string, b: string) => (CODE_ORDER.get(a) ?? 0) - (CODE_ORDER.get(b) ?? 0);
const byGroup = (a: string, b: string) => Number(a) - Number(b);
/** Unites `codes` into the claim's set, checking each is a taxonomy code. */
function addCodes(sets: Map<string, Set<string>>, id: string, codes: readonly string[]): void {
  const set = sets.get(id) ?? new Set<string>();
  for (const c of codes) set.add(narrativeInfo(c).code);
  sets.set(id, set);
}

const groupSet = (codes: Set<string>) => new Set([...codes].map((c) => String(groupOf(c))));

/**
 * Task 2: multi-label scores over CARDS codes and over their groups, and the error split, over the gold claims
 * (`id` = claim id). A gold claim without a prediction predicts the empty set; several prediction rows for a
 * claim are united. Codes must be taxonomy codes (normalise them when reading); anything else throws.
 */
export function scoreNarratives(
  preds: readonly Task2Prediction[],
  gold: readonly NarrativeExample[],
): NarrativeScores {
  const goldSets = new Map<string, Set<string>>();
  for (const g of gold) addCodes(goldSets, g.id, g.codes);
  const predSets = new Map<string, Set<string>>();
  for (const p of preds) addCodes(predSets, p.claimId, p.codes);
  const pairs: SetPair[] = [...goldSets].map(([id, g]) => ({ gold: g, pred: predSets.get(id) ?? new Set() }));
  const groupPairs = pairs.map((p) => ({ gold: groupSet(p.gold), pred: groupSet(p.pred) }));
  const errors: NarrativeErrors = { exact: 0, right_group: 0, wrong_group: 0 };
  pairs.forEach((p, i) => {
    if (sameSet(p.gold, p.pred)) errors.exact++;
    else if (sameSet(groupPairs[i].gold, groupPairs[i].pred)) errors.right_group++;
    else errors.wrong_group++;
  });
  return {
    ...multiLabel(pairs, byCode),
    claims: pairs.length,
    group: multiLabel(groupPairs, byGroup),
    errors,
    unknown_claims: unknownClaims(predSets.keys(), goldSets),
  };
}

/** Share of rows flagged, per group (e.g. the share of a source's texts given a narrative), groups sorted. */
export function flaggedShareByGroup(
  groups: readonly string[],
  flagged: readonly boolean[],
): Record<string, { rows: number; flagged: number; share: number }> {
  if (groups.length !== flagged.length) throw new Error("flaggedShareByGroup: lengths differ");
  const counts = new Map<string, [number, number]>();
  groups.forEach((g, i) => {
    const c = counts.get(g) ?? [0, 0];
    c[0]++;
    if (flagged[i]) c[1]++;
    counts.set(g, c);
  });
  return Object.fromEntries(
    [...counts]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([g, [rows, f]]) => [g, { rows, flagged: f, share: f / rows }]),
  );
}

/**
 * Mean F1 over the codes present in the gold (CARDS-style figure), of predicted code sets against gold ones, on
 * the rows in `idx` (default all; a row a resample repeats counts again: each sampled row gets an id of its own).
 */
export function meanF1OverPresent(
  preds: readonly (readonly string[])[],
  gold: readonly (readonly string[])[],
  idx: readonly number[] = gold.map((_, i) => i),
): number {
  const scores = scoreNarratives(
    idx.map((i, k) => ({ claimId: String(k), codes: [...preds[i]] })),
    idx.map((i, k) => ({ id: String(k), text: "", codes: [...gold[i]] })),
  );
  const present = Object.values(scores.per_label).filter((p) => p.support > 0);
  return present.length ? present.reduce((s, p) => s + p.f1, 0) / present.length : 0;
}

/** Cohen's kappa of two raters' nominal labels of the same items: (p_o - p_e) / (1 - p_e); 1 when p_e is 1. */
export function cohenKappa(a: readonly string[], b: readonly string[]): number {
  if (a.length !== b.length) throw new Error("cohenKappa: lengths differ");
  const n = a.length;
  if (n === 0) return Number.NaN;
  const count = (xs: readonly string[]) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const ca = count(a);
  const cb = count(b);
  const observed = a.filter((x, i) => x === b[i]).length / n;
  let expected = 0;
  for (const [label, k] of ca) expected += (k / n) * ((cb.get(label) ?? 0) / n);
  return expected === 1 ? 1 : (observed - expected) / (1 - expected);
}

/** Weighted F1 (official definition) and Refutes F1 of label decisions against gold labels. */
export function verificationF1(
  pred: readonly Label[],
  gold: readonly Label[],
): { weighted: number; supports: number; refutes: number } {
  const preds = pred.map((label, i) => ({ claimId: String(i), abstractId: "a", rank: 1, label }));
  const golds = gold.map((label, i) => ({ claimId: String(i), abstractId: "a", label }));
  const s = scoreVerification(preds, golds);
  return {
    weighted: s.f1_weighted,
    supports: s.per_label.Supports?.f1 ?? 0,
    refutes: s.per_label.Refutes?.f1 ?? 0,
  };
}
