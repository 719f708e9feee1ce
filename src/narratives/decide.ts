/**
 * The decision rules, pure. First the gate: a claim carries a narrative when its calibrated P(narrative) is at
 * least the rule's threshold (`check`: NARRATIVE_THRESHOLD, more likely than not; `classify`: the model's own,
 * lower one), else it is 0_0, alone. Then the groups given a narrative: each
 * group whose P(group | narrative) passes its threshold, or the most likely one when none does (the gate has
 * already said there is a narrative). Then the codes within each chosen group; when none passes, the group code
 * X_0 (annotation guideline) or, as an ablation, the most likely sub-code. The `classify` rule may instead name one
 * code (ClassifyCodes "single"): the most likely sub-code of the most likely group, as CARDS labels one code per text.
 */
import { canonicalCodeSet, type Group, groupCode, NO_NARRATIVE, subCodes } from "../taxonomy/cards.ts";

export type Fallback = "group-code" | "argmax";

/**
 * How the `classify` rule names codes once the gate passes: the hierarchy with either fallback, or "single": the
 * most likely sub-code of the most likely group (its group code when it has none). Chosen out of fold on CARDS.
 */
export type ClassifyCodes = Fallback | "single";

/**
 * Which decision rule: `check` (the product: `check`, the API, the page) names a narrative only when P(narrative)
 * is at least NARRATIVE_THRESHOLD, for precision on mainstream text; `classify` (the shared task's output:
 * `classify`, batch task 2) names one from the lower threshold chosen out of fold for CARDS-style mean F1
 * (Thresholds.classifyNarrative), since the gate's precision costs CARDS recall.
 */
export type DecisionRule = "check" | "classify";

/** P(narrative) at or above which `check` names a narrative: the label follows the probability shown beside it. */
export const NARRATIVE_THRESHOLD = 0.5;

export interface NarrativeScores {
  /** Calibrated P(the text carries any narrative). */
  narrative: number;
  /** P(group | narrative) for groups 1..5 (index 0 unused, 0). */
  group: number[];
  /** P(code | its group) for every sub-code. */
  code: Record<string, number>;
}

export interface Thresholds {
  /** Per group 1..5, on P(group | narrative) (index 0 unused). */
  group: number[];
  /** Per sub-code, on P(code | group). */
  code: Record<string, number>;
  /** The `classify` rule's threshold on P(narrative) (absent in older models: NARRATIVE_THRESHOLD). */
  classifyNarrative?: number;
  /** How the `classify` rule names codes (absent in older models: the model's fallback, hierarchy). */
  classifyCodes?: ClassifyCodes;
}

/** The threshold on P(narrative) of a rule. */
export const gateThreshold = (thresholds: Thresholds, rule: DecisionRule): number =>
  rule === "classify" ? (thresholds.classifyNarrative ?? NARRATIVE_THRESHOLD) : NARRATIVE_THRESHOLD;

export const NARRATIVE_GROUPS: readonly Group[] = [1, 2, 3, 4, 5];

export function decide(
  scores: NarrativeScores,
  thresholds: Thresholds,
  fallback: Fallback,
  rule: DecisionRule = "check",
): string[] {
  if (!(scores.narrative >= gateThreshold(thresholds, rule))) return [NO_NARRATIVE];
  const codesRule = rule === "classify" ? (thresholds.classifyCodes ?? fallback) : fallback;
  if (codesRule === "single") return [topCode(scores)];
  let groups = NARRATIVE_GROUPS.filter((g) => scores.group[g] >= thresholds.group[g]);
  if (groups.length === 0) groups = [likeliestGroup(scores)];
  const codes: string[] = [];
  for (const g of groups) {
    const subs = subCodes(g);
    const passing = subs.filter((c) => (scores.code[c] ?? 0) >= (thresholds.code[c] ?? 1));
    if (passing.length > 0) codes.push(...passing);
    else if (codesRule === "group-code") codes.push(groupCode(g));
    else codes.push(likeliestCode(scores, subs));
  }
  // canonicalCodeSet validates every code and orders them.
  return canonicalCodeSet(codes);
}

const likeliestGroup = (scores: NarrativeScores): Group =>
  NARRATIVE_GROUPS.reduce((a, b) => ((scores.group[b] ?? 0) > (scores.group[a] ?? 0) ? b : a));

const likeliestCode = (scores: NarrativeScores, codes: readonly string[]): string =>
  codes.reduce((a, b) => ((scores.code[b] ?? 0) > (scores.code[a] ?? 0) ? b : a));

/** The most likely sub-code of the most likely group (its group code when the group has no sub-codes). */
function topCode(scores: NarrativeScores): string {
  const g = likeliestGroup(scores);
  const subs = subCodes(g);
  return subs.length === 0 ? groupCode(g) : likeliestCode(scores, subs);
}

/**
 * Marginal probability per code: P(0_0) = 1 - P(narrative), P(X_0) = P(narrative) P(X | narrative) (the group's
 * share), P(X_Y) = P(X_0) P(X_Y | X). The group marginals sum to P(narrative).
 */
export function codeProbabilities(scores: NarrativeScores): Record<string, number> {
  const out: Record<string, number> = { [NO_NARRATIVE]: 1 - scores.narrative };
  for (const g of NARRATIVE_GROUPS) {
    const pg = scores.narrative * (scores.group[g] ?? 0);
    out[groupCode(g)] = pg;
    for (const c of subCodes(g)) out[c] = pg * (scores.code[c] ?? 0);
  }
  return out;
}
