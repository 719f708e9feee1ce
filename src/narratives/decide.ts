/**
 * The hierarchy's decision rules, pure: groups first (0_0 only when no group passes its threshold), then the
 * codes within each chosen group; when a group is clear but no sub-code passes, the group code X_0 (annotation
 * guideline) or, as an ablation, the most likely sub-code.
 */
import { canonicalCodeSet, type Group, groupCode, NO_NARRATIVE, subCodes } from "../taxonomy/cards.ts";

export type Fallback = "group-code" | "argmax";

export interface NarrativeScores {
  /** P(group) for groups 0..5 (0 = no narrative). */
  group: number[];
  /** P(code | its group) for every sub-code. */
  code: Record<string, number>;
}

export interface Thresholds {
  /** Per group 1..5 (index 0 unused). */
  group: number[];
  /** Per sub-code. */
  code: Record<string, number>;
}

export const NARRATIVE_GROUPS: readonly Group[] = [1, 2, 3, 4, 5];

export function decide(scores: NarrativeScores, thresholds: Thresholds, fallback: Fallback): string[] {
  const codes: string[] = [];
  for (const g of NARRATIVE_GROUPS) {
    if (!(scores.group[g] >= thresholds.group[g])) continue;
    const subs = subCodes(g);
    const passing = subs.filter((c) => (scores.code[c] ?? 0) >= (thresholds.code[c] ?? 1));
    if (passing.length > 0) codes.push(...passing);
    else if (fallback === "group-code") codes.push(groupCode(g));
    else codes.push(subs.reduce((a, b) => ((scores.code[b] ?? 0) > (scores.code[a] ?? 0) ? b : a)));
  }
  // canonicalCodeSet validates every code and enforces 0_0-alone.
  return canonicalCodeSet(codes.length > 0 ? codes : [NO_NARRATIVE]);
}

/** Marginal probability per code: P(0_0) = P(group 0), P(X_0) = P(group X), P(X_Y) = P(X) P(X_Y | X). */
export function codeProbabilities(scores: NarrativeScores): Record<string, number> {
  const out: Record<string, number> = { [NO_NARRATIVE]: scores.group[0] };
  for (const g of NARRATIVE_GROUPS) {
    out[groupCode(g)] = scores.group[g];
    for (const c of subCodes(g)) out[c] = scores.group[g] * (scores.code[c] ?? 0);
  }
  return out;
}
