/** Human-readable fixed-width text reports of the scores of src/evaluation/metrics.ts (for the terminal). */
import { LABELS } from "../types.ts";
import type { MultiLabelScores, NarrativeScores, Prf, Task1GroupScores, Task1Scores } from "./metrics.ts";

/** A figure as every report prints it: 4 decimals, "n/a" when undefined. */
export const num = (v: number | null): string => (v === null ? "n/a" : v.toFixed(4));

/** The rows of each table, as plain data: the text report and the HTML report (html-report.ts) format the same rows. */
export const RETRIEVAL_ROWS = (s: Task1Scores): [string, number | null][] => [
  ["Recall@2", s.recall_at_2],
  ["Recall@5", s.recall_at_5],
  ["Recall@10", s.recall_at_10],
  ["Bpref", s.bpref],
  ["Score 1.1", s.score_1_1],
  ["nDCG@10 (unofficial)", s.ndcg_at_10],
];

export const VERIFICATION_ROWS = (s: Task1Scores): [string, number | null][] => [
  ["Precision (weighted)", s.precision_weighted],
  ["Recall (weighted)", s.recall_weighted],
  ["F1 (weighted)", s.f1_weighted],
  ["Score 1.2", s.score_1_2],
];

export const MULTI_LABEL_ROWS = (s: MultiLabelScores): [string, number | null][] => [
  ["Macro precision", s.macro_precision],
  ["Macro recall", s.macro_recall],
  ["Macro F1", s.macro_f1],
  ["Micro precision", s.micro_precision],
  ["Micro recall", s.micro_recall],
  ["Micro F1", s.micro_f1],
  ["Weighted F1", s.weighted_f1],
  ["Exact match", s.exact_match],
];

export const PRF_HEADER = ["Precision", "Recall", "F1", "Support"];

export const prfRows = (perLabel: Partial<Record<string, Prf>>): string[][] =>
  Object.entries(perLabel).map(([label, s]) => [
    label,
    num(s?.precision ?? 0),
    num(s?.recall ?? 0),
    num(s?.f1 ?? 0),
    String(s?.support ?? 0),
  ]);

export const GROUP_HEADER = ["Group", "Claims", "R@5", "Bpref", "Score 1.1", "F1 (w)", "Score 1.2"];

export const groupRows = (groups: readonly Task1GroupScores[], name: (group: number) => string): string[][] =>
  groups.map(({ group, claims, scores: s }) => [
    name(group),
    String(claims),
    num(s.recall_at_5),
    num(s.bpref),
    num(s.score_1_1),
    num(s.f1_weighted),
    num(s.score_1_2),
  ]);

/** Columns padded to their widest cell; the first column left-aligned, the others right-aligned. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const metricTable = (rows: [string, number | null][]): string =>
  textTable(
    ["Metric", "Value"],
    rows.map(([name, v]) => [name, num(v)]),
  );

const prfTable = (title: string, perLabel: Partial<Record<string, Prf>>): string =>
  textTable([title, ...PRF_HEADER], prfRows(perLabel));

/** Task 1: retrieval metrics, then verification (per-label table, confusion matrix) when the run has labels. */
export function formatTask1Report(s: Task1Scores): string {
  const parts = [
    `Task 1.1 retrieval (${s.claims_with_relevant} claims with a relevant abstract, ${s.bpref_claims} in Bpref)`,
    metricTable(RETRIEVAL_ROWS(s)),
  ];
  if (s.per_label === null || s.confusion === null) {
    parts.push("Task 1.2 verification: no labels in the predictions");
  } else {
    const confusion = s.confusion;
    parts.push(
      `Task 1.2 verification (${s.matched_pairs} predicted pairs in the gold)`,
      metricTable(VERIFICATION_ROWS(s)),
      prfTable("Label", s.per_label),
      "Confusion matrix (rows: gold, columns: predicted)",
      textTable(
        ["Gold \\ Predicted", ...LABELS],
        LABELS.map((g) => [g, ...LABELS.map((p) => String(confusion[g][p]))]),
      ),
    );
  }
  // Predicted claims not in the gold are the command's warning (stderr, once), not part of the report.
  return parts.join("\n\n");
}

/** Task 1 headline figures per gold narrative group, one row per group. */
export function formatTask1GroupReport(groups: readonly Task1GroupScores[]): string {
  return textTable(GROUP_HEADER, groupRows(groups, String));
}

const multiLabelTable = (s: MultiLabelScores): string => metricTable(MULTI_LABEL_ROWS(s));

/** Task 2: code-level and group-level metrics, per-label tables and the error split. */
export function formatNarrativeReport(s: NarrativeScores): string {
  const share = (n: number) => (s.claims === 0 ? "n/a" : `${((100 * n) / s.claims).toFixed(1)}%`);
  return [
    `Task 2 narratives (${s.claims} gold claims), codes`,
    multiLabelTable(s),
    prfTable("Code", s.per_label),
    "Task 2 narratives, groups",
    multiLabelTable(s.group),
    prfTable("Group", s.group.per_label),
    "Errors per gold claim",
    textTable(
      ["Outcome", "Claims", "Share"],
      [
        ["Exact", String(s.errors.exact), share(s.errors.exact)],
        ["Right group, wrong code", String(s.errors.right_group), share(s.errors.right_group)],
        ["Wrong group", String(s.errors.wrong_group), share(s.errors.wrong_group)],
      ],
    ),
  ].join("\n\n");
}
