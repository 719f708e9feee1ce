/**
 * `evaluate --html FILE`: the scores of src/evaluation/metrics.ts as one self-contained HTML page (inline CSS and
 * plain SVG written here, no script, no font or file fetched), so it opens offline and can be mailed or archived.
 * Figures: the task 1.2 confusion matrix, the task 1 recall per gold narrative group (with --narratives) and the
 * task 2 per-label F1; the tables hold the same numbers as the text report.
 */
import { GROUPS, narrativeInfo } from "../taxonomy/cards.ts";
import { LABELS } from "../types.ts";
import type {
  Confusion,
  MultiLabelScores,
  NarrativeScores,
  Prf,
  Task1GroupScores,
  Task1Scores,
} from "./metrics.ts";
import {
  GROUP_HEADER,
  groupRows,
  MULTI_LABEL_ROWS,
  num,
  PRF_HEADER,
  prfRows,
  RETRIEVAL_ROWS,
  VERIFICATION_ROWS,
} from "./report.ts";

/** What the report shows: one task's scores and where they came from. */
export type HtmlReportInput = {
  predictions: string;
  gold: string;
  /** The time the report was made, as printed (the caller decides, so the output is testable). */
  created: string;
} & (
  | { task: 1; scores: Task1Scores; byGroup?: readonly Task1GroupScores[]; narratives?: string }
  | { task: 2; scores: NarrativeScores }
);

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
/** Text for HTML and SVG content and attributes. */
export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const SERIES_COLOURS = ["#1a56db", "#1b7f3b", "#b36b00"];

function table(header: string[], rows: string[][], caption?: string): string {
  const head = header.map((h, i) => `<th scope="col"${i ? ' class="n"' : ""}>${esc(h)}</th>`).join("");
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i ? `<td class="n">${esc(c)}</td>` : `<th scope="row">${esc(c)}</th>`)).join("")}</tr>`,
    )
    .join("\n");
  return `<table>${caption ? `<caption>${esc(caption)}</caption>` : ""}<thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const metricTable = (caption: string, rows: [string, number | null][]): string =>
  table(
    ["Metric", "Value"],
    rows.map(([name, v]) => [name, num(v)]),
    caption,
  );

const prfTable = (caption: string, first: string, perLabel: Partial<Record<string, Prf>>): string =>
  table([first, ...PRF_HEADER], prfRows(perLabel), caption);

function figure(id: string, caption: string, svg: string): string {
  return `<figure class="figure" id="${id}" data-figure="${id}">\n${svg}\n<figcaption>${esc(caption)}</figcaption>\n</figure>`;
}

/** A row of bars, one per series, for each item. */
export interface BarRow {
  label: string;
  values: number[];
}

/**
 * Horizontal bars on a 0-1 scale, one group of bars (one per series) per row, the value written after each bar.
 * Plain SVG with a <title> for screen readers.
 */
export function barChart(title: string, rows: readonly BarRow[], series: readonly string[]): string {
  // Each row: its label on a line of its own (labels are long: "5 Climate movement or science is unreliable"),
  // then one bar per series.
  const left = 16;
  const barW = 460;
  const barH = 14;
  const labelH = 17;
  const gap = 8;
  const legendH = series.length > 1 ? 24 : 0;
  const rowH = labelH + series.length * barH + gap;
  const top = 8 + legendH;
  const height = top + rows.length * rowH + 22;
  const width = left + barW + 56;
  const colour = (s: number) => SERIES_COLOURS[s % SERIES_COLOURS.length];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    `<title>${esc(title)}</title>`,
  ];
  if (series.length > 1)
    series.forEach((name, s) => {
      const x = left + s * 110;
      out.push(
        `<rect x="${x}" y="6" width="12" height="12" fill="${colour(s)}"/>`,
        `<text x="${x + 16}" y="16" class="legend">${esc(name)}</text>`,
      );
    });
  // Grid lines at 0, 0.25, ... 1.
  for (let t = 0; t <= 4; t++) {
    const x = left + (barW * t) / 4;
    out.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${height - 18}" class="grid"/>`,
      `<text x="${x}" y="${height - 5}" class="tick" text-anchor="middle">${(t / 4).toFixed(2)}</text>`,
    );
  }
  rows.forEach((row, r) => {
    const y0 = top + r * rowH;
    out.push(`<text x="${left}" y="${y0 + 12}" class="label">${esc(row.label)}</text>`);
    row.values.forEach((v, s) => {
      const w = Math.max(0, Math.min(1, v)) * barW;
      const y = y0 + labelH + s * barH;
      out.push(
        `<rect class="bar" x="${left}" y="${y + 1}" width="${w.toFixed(1)}" height="${barH - 2}" fill="${colour(s)}" data-value="${v}"><title>${esc(`${row.label}, ${series[s]}: ${v.toFixed(4)}`)}</title></rect>`,
        `<text x="${(left + w + 4).toFixed(1)}" y="${y + barH - 3}" class="value">${v.toFixed(3)}</text>`,
      );
    });
  });
  out.push("</svg>");
  return out.join("\n");
}

/** The confusion matrix as a heat map: each cell's shade is its share of the gold row (the row's recall). */
export function confusionChart(confusion: Confusion): string {
  const cell = 92;
  const left = 190;
  const top = 70;
  const size = LABELS.length * cell;
  const width = left + size + 10;
  const height = top + size + 10;
  const short: Record<string, string> = {
    Supports: "Supports",
    Refutes: "Refutes",
    "Not Enough Information": "NEI",
  };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    "<title>Task 1.2 confusion matrix: rows are gold labels, columns predicted labels</title>",
    `<text x="${left + size / 2}" y="18" text-anchor="middle" class="axis">Predicted</text>`,
  ];
  LABELS.forEach((p, j) => {
    out.push(
      `<text x="${left + j * cell + cell / 2}" y="${top - 12}" text-anchor="middle" class="label">${esc(short[p] ?? p)}</text>`,
    );
  });
  LABELS.forEach((g, i) => {
    const rowTotal = LABELS.reduce((sum, p) => sum + confusion[g][p], 0);
    const y = top + i * cell;
    out.push(
      `<text x="${left - 10}" y="${y + cell / 2 + 4}" text-anchor="end" class="label">Gold ${esc(short[g] ?? g)}</text>`,
    );
    LABELS.forEach((p, j) => {
      const n = confusion[g][p];
      const share = rowTotal === 0 ? 0 : n / rowTotal;
      const x = left + j * cell;
      // Light to dark blue with the row share; dark cells get white text.
      const light = Math.round(97 - share * 62);
      const ink = share > 0.55 ? " on-dark" : "";
      out.push(
        `<rect class="cell" x="${x}" y="${y}" width="${cell - 2}" height="${cell - 2}" fill="hsl(217 70% ${light}%)" data-gold="${esc(g)}" data-predicted="${esc(p)}" data-count="${n}"><title>${esc(`gold ${g}, predicted ${p}: ${n} (${(share * 100).toFixed(1)}% of the gold row)`)}</title></rect>`,
        `<text x="${x + cell / 2 - 1}" y="${y + cell / 2 - 2}" text-anchor="middle" class="count${ink}">${n}</text>`,
        `<text x="${x + cell / 2 - 1}" y="${y + cell / 2 + 16}" text-anchor="middle" class="share${ink}">${(share * 100).toFixed(0)}%</text>`,
      );
    });
  });
  out.push("</svg>");
  return out.join("\n");
}

const groupName = (g: number): string => `${g} ${narrativeInfo(`${g}_0`).name}`;

function task1Sections(s: Task1Scores, byGroup: readonly Task1GroupScores[] | undefined): string[] {
  const parts = [
    "<h2>Task 1.1: retrieval</h2>",
    `<p>${s.claims_with_relevant} claims with a relevant abstract, ${s.bpref_claims} in Bpref.</p>`,
    metricTable("Retrieval", RETRIEVAL_ROWS(s)),
    "<h2>Task 1.2: verification</h2>",
  ];
  if (s.per_label === null || s.confusion === null) {
    parts.push("<p>No labels in the predictions: a retrieval-only run.</p>");
  } else {
    parts.push(
      `<p>${s.matched_pairs} predicted pairs in the gold.</p>`,
      metricTable("Verification", VERIFICATION_ROWS(s)),
      figure(
        "confusion",
        "Confusion matrix of task 1.2: rows are gold labels, columns predicted; each cell gives the count and its share of the gold row.",
        confusionChart(s.confusion),
      ),
      prfTable("Per label", "Label", s.per_label),
    );
  }
  if (byGroup) {
    parts.push(
      "<h2>Task 1 by gold narrative group</h2>",
      figure(
        "group-recall",
        "Recall@2, @5 and @10 of task 1.1 per gold narrative group (a claim with codes in two groups counts in both).",
        barChart(
          "Task 1.1 recall per gold narrative group",
          byGroup.map(({ group, claims, scores }) => ({
            label: `${groupName(group)} (${claims})`,
            values: [scores.recall_at_2, scores.recall_at_5, scores.recall_at_10],
          })),
          ["Recall@2", "Recall@5", "Recall@10"],
        ),
      ),
      table(GROUP_HEADER, groupRows(byGroup, groupName), "Per group"),
    );
  }
  return parts;
}

const multiLabelTable = (caption: string, s: MultiLabelScores): string =>
  metricTable(caption, MULTI_LABEL_ROWS(s));

function task2Sections(s: NarrativeScores): string[] {
  const share = (n: number) => (s.claims === 0 ? "n/a" : `${((100 * n) / s.claims).toFixed(1)}%`);
  const groups = GROUPS.map(String).filter((g) => g in s.group.per_label);
  return [
    "<h2>Task 2: narratives, codes</h2>",
    `<p>${s.claims} gold claims.</p>`,
    multiLabelTable("Codes", s),
    figure(
      "code-f1",
      "F1 per CARDS code of task 2 (codes in the gold or the predictions), with the gold support in brackets.",
      barChart(
        "Task 2 F1 per code",
        Object.entries(s.per_label).map(([code, p]) => ({
          label: `${code} ${narrativeInfo(code).name} (${p.support})`,
          values: [p.f1],
        })),
        ["F1"],
      ),
    ),
    prfTable("Per code", "Code", s.per_label),
    "<h2>Task 2: narratives, groups</h2>",
    multiLabelTable("Groups", s.group),
    figure(
      "group-f1",
      "F1 per CARDS group of task 2, with the gold support in brackets.",
      barChart(
        "Task 2 F1 per group",
        groups.map((g) => ({
          label: `${groupName(Number(g))} (${s.group.per_label[g].support})`,
          values: [s.group.per_label[g].f1],
        })),
        ["F1"],
      ),
    ),
    prfTable("Per group", "Group", s.group.per_label),
    "<h2>Errors per gold claim</h2>",
    table(
      ["Outcome", "Claims", "Share"],
      [
        ["Exact", String(s.errors.exact), share(s.errors.exact)],
        ["Right group, wrong code", String(s.errors.right_group), share(s.errors.right_group)],
        ["Wrong group", String(s.errors.wrong_group), share(s.errors.wrong_group)],
      ],
    ),
  ];
}

const STYLE = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f; max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; line-height: 1.45; }
h1 { margin: 0.5rem 0 0.2rem; } h2 { margin: 2rem 0 0.5rem; font-size: 1.15rem; }
.files { color: #5f6368; font-size: 0.9rem; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
th, td { padding: 0.2rem 0.7rem; border-bottom: 1px solid #e3e3e3; text-align: left; font-weight: normal; }
thead th { font-weight: 600; border-bottom: 2px solid #bbb; }
.n { text-align: right; font-variant-numeric: tabular-nums; }
.figure { margin: 1rem 0; overflow-x: auto; } figcaption { color: #5f6368; font-size: 0.85rem; max-width: 40rem; }
svg text { font-family: inherit; font-size: 12px; fill: #1d1d1f; } svg .tick { fill: #5f6368; font-size: 10px; }
svg .grid { stroke: #e3e3e3; } svg .count { font-size: 18px; font-weight: 600; } svg .axis { font-weight: 600; } svg text.on-dark { fill: #fff; }
`;

/** The whole page. */
export function htmlReport(input: HtmlReportInput): string {
  const title = `ClimateCheck evaluation, task ${input.task}`;
  const sections =
    input.task === 1 ? task1Sections(input.scores, input.byGroup) : task2Sections(input.scores);
  const files = [
    `Predictions: ${input.predictions}`,
    `gold: ${input.gold}`,
    ...(input.task === 1 && input.narratives ? [`narratives: ${input.narratives}`] : []),
    `made ${input.created}`,
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${esc(title)}</h1>
<p class="files">${esc(files.join(" · "))}</p>
<p>Official ClimateCheck 2026 metrics, as <code>climatecheck evaluate</code> prints them (docs/evaluate.md says how each is computed).</p>
${sections.join("\n")}
</body>
</html>
`;
}
