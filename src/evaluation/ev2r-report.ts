/** The Ev2R and automatic-verification figures as a text report (for the terminal), and the audit rows. */
import type { Ev2rPair, Ev2rScores } from "./ev2r.ts";
import { textTable } from "./report.ts";

const num = (v: number | null): string => (v === null ? "n/a" : v.toFixed(4));

export function formatEv2rReport(s: Ev2rScores): string {
  const x = s.ev2r_excluded;
  return [
    `Ev2R on unannotated retrieved abstracts (${s.ev2r_claims} claims, ${s.ev2r_pairs} unannotated pairs)`,
    textTable(
      ["Metric", "Value"],
      [
        ["Ev2R", num(s.ev2r)],
        ["  reference part S_ref", num(s.ev2r_ref)],
        ["  proxy part S_proxy", num(s.ev2r_proxy)],
        ["Automatic verification S_ver", num(s.auto_verification)],
        ["  P(y^ | c, r)", num(s.auto_verification_prob)],
        ["  y^ = y*", num(s.auto_verification_agreement)],
      ].map(([k, v]) => [k, v]),
    ),
    `Left out: ${x.all_nei} claim(s) with only Not Enough Information gold, ${x.no_predictions} without predictions, ${x.all_retrieved_annotated} whose retrieved abstracts are all annotated`,
    `Judge: ${s.ev2r_judge}${s.ev2r_approximation ? ` (${s.ev2r_approximation})` : ""}; proxy verifier: ${s.ev2r_verifier}`,
    ...(s.auto_verification_note ? [`Automatic verification: n/a, ${s.auto_verification_note}`] : []),
  ].join("\n\n");
}

export const DETAILS_HEADER = [
  "claim_id",
  "abstract_id",
  "rank",
  "best_gold_abstract_id",
  "best_gold_label",
  "ref_precision",
  "ref_recall",
  "s_ref",
  "s_proxy",
  "ev2r",
  "predicted_label",
  "p_predicted",
  "s_ver",
];

/** One audit row per unannotated pair, in the order of DETAILS_HEADER. */
export const detailsRow = (p: Ev2rPair): (string | number)[] => [
  p.claimId,
  p.abstractId,
  p.rank,
  p.bestGold,
  p.bestGoldLabel,
  p.precision,
  p.recall,
  p.sRef,
  p.sProxy,
  p.ev2r,
  p.predicted ?? "",
  p.pPredicted ?? "",
  p.sVer ?? "",
];
