/**
 * The written contrast texts (data/narratives-contrast): counts per code, kind and split, subjects per split, and,
 * when the second labeller's file is there, agreement with the writers' codes (Cohen's kappa on narrative vs none
 * and on the first code). No model is involved, so this section reads the test split's labels, never its scores.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cohenKappa } from "../src/evaluation/metrics.ts";
import {
  CONTRAST_DIR,
  CONTRAST_KINDS,
  type ContrastSplit,
  readContrastDir,
  readSecondLabels,
} from "../src/narratives/data.ts";
import { NARRATIVE_CODES, NO_NARRATIVE } from "../src/taxonomy/cards.ts";
import { type BenchSection, table } from "./report.ts";

const SPLITS: readonly ContrastSplit[] = ["train", "dev", "test"];

export async function bench(): Promise<BenchSection> {
  const texts = await readContrastDir();
  const codes = NARRATIVE_CODES.filter((c) => texts.some((t) => t.targetCode === c));
  if (texts.some((t) => t.targetCode === "none")) codes.push("none");
  const count = (keep: (t: (typeof texts)[number]) => boolean) => texts.filter(keep).length;
  const rows = codes.map((c) => [
    c,
    ...CONTRAST_KINDS.map((k) => count((t) => t.targetCode === c && t.kind === k)),
    ...SPLITS.map((s) => count((t) => t.targetCode === c && t.split === s)),
    new Set(texts.filter((t) => t.targetCode === c).map((t) => t.subject)).size,
  ]);
  rows.push([
    "all",
    ...CONTRAST_KINDS.map((k) => count((t) => t.kind === k)),
    ...SPLITS.map((s) => count((t) => t.split === s)),
    new Set(texts.map((t) => `${t.targetCode}/${t.subject}`)).size,
  ]);
  const counts = table(
    ["target code", ...CONTRAST_KINDS, ...SPLITS.map((s) => `${s} split`), "subjects"],
    rows,
  );

  const secondPath = join(CONTRAST_DIR, "second-labels.jsonl");
  let agreement = "No second labels yet (second-labels.jsonl is absent).";
  if (existsSync(secondPath)) {
    const second = await readSecondLabels(secondPath);
    const both = texts.filter((t) => second.has(t.id));
    const other = both.map((t) => second.get(t.id) as string[]);
    const isNone = (c: readonly string[]) => (c.length === 1 && c[0] === NO_NARRATIVE ? "none" : "narrative");
    const binary = cohenKappa(
      both.map((t) => isNone(t.codes)),
      other.map(isNone),
    );
    const first = cohenKappa(
      both.map((t) => t.codes[0]),
      other.map((c) => c[0]),
    );
    const same = both.filter((t, i) => isNone(t.codes) === isNone(other[i])).length;
    const sameFirst = both.filter((t, i) => t.codes[0] === other[i][0]).length;
    agreement = `${both.length} texts labelled twice (${((100 * both.length) / texts.length).toFixed(1)}% of ${texts.length}; ${second.size - both.length} second labels name no written text).

${table(
  ["agreement", "raw", "Cohen's kappa"],
  [
    ["narrative vs none", (same / both.length).toFixed(3), binary.toFixed(3)],
    ["first code (taxonomy order)", (sameFirst / both.length).toFixed(3), first.toFixed(3)],
  ],
)}`;
  }
  return {
    id: "narratives-data",
    title: "Narratives: the written contrast texts, counts and agreement",
    command: "npm run bench -- narratives-data",
    markdown: `${texts.length} texts in data/narratives-contrast/written-*.jsonl (GUIDELINES.md there). Splits by subject
(seeded hash of target code and subject slug, about 60/20/20; all texts of a subject in one split).

${counts}

### Agreement

${agreement}
`,
  };
}
