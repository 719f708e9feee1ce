/**
 * Readers and writers for the ClimateCheck 2026 formats: the publications corpus, the claims/labels file
 * (task 1 and task 2 gold) and the task 1 and task 2 prediction files.
 */
import { normaliseNarrativeCode } from "../taxonomy/cards.ts";
import {
  type Claim,
  type CorpusAbstract,
  type Label,
  type LabelledPair,
  type NarrativeExample,
  parseLabel,
  type Task1Prediction,
  type Task2Prediction,
} from "../types.ts";
import { DataError } from "./errors.ts";
import {
  cellString,
  type NumberedRow,
  readAll,
  readTable,
  requireColumns,
  requireString,
  writeCsv,
} from "./tables.ts";
import { parsePythonStringList } from "./training-sets.ts";

function requireLabel(file: string, r: NumberedRow, field: string): Label {
  const raw = requireString(file, r, field);
  const label = parseLabel(raw);
  if (!label) {
    throw new DataError(
      file,
      `unknown label "${raw}" (expected Supports, Refutes or Not Enough Information)`,
      {
        line: r.line,
        field,
      },
    );
  }
  return label;
}

/** Parses `;`-joined CARDS codes (commas, brackets and quotes tolerated), validating each. */
export function parseNarratives(file: string, r: NumberedRow, field: string): string[] {
  const raw = requireString(file, r, field);
  const parts = raw
    .replace(/[[\]'"]/g, "")
    .split(/[;,]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) throw new DataError(file, "no narrative code", { line: r.line, field });
  const codes: string[] = [];
  for (const p of parts) {
    const code = /^\d+_\d+$/.test(p) ? normaliseNarrativeCode(p) : undefined;
    if (!code) throw new DataError(file, `unknown CARDS code "${p}"`, { line: r.line, field });
    if (!codes.includes(code)) codes.push(code);
  }
  return codes;
}

export type CorpusFormat = "auto" | "climatecheck" | "scifact" | "climate-fever";

export interface ReadCorpusOptions {
  format?: CorpusFormat;
  /** Called for rows that are skipped (no id or no text); without it such rows are errors. */
  onSkip?: (line: number, reason: string) => void;
}

function detectFormat(file: string, first: NumberedRow): Exclude<CorpusFormat, "auto"> {
  const cols = Object.keys(first.row);
  if (cols.includes("abstract_id") || cols.includes("abstract_original_index")) return "climatecheck";
  if (cols.includes("doc_id") && cols.includes("abstract")) return "scifact";
  if (cols.includes("claim_id") && cols.includes("evidences")) return "climate-fever";
  throw new DataError(
    file,
    `cannot tell the corpus format from its columns (${cols.join(", ")}): no abstract_id (ClimateCheck), doc_id (SciFact) or evidences (Climate-FEVER); use --format`,
    // The id column of the project's own layout is the one missing.
    { line: first.line, field: "abstract_id" },
  );
}

function yearOf(value: unknown): number | undefined {
  const m = /\b(1[89]\d\d|20\d\d)\b/.exec(String(value ?? ""));
  return m ? Number(m[1]) : undefined;
}

/**
 * Streams a corpus as abstracts. ClimateCheck layout: `abstract_id`, `abstract`, optional `title`, `doi`, `url`,
 * `source`, `year`/`publication_year`. SciFact layout: `doc_id`, `title`, `abstract` (list of sentences).
 * Climate-FEVER: each distinct evidence sentence becomes a one-sentence abstract (id = `evidence_id`).
 */
export async function* readCorpus(
  path: string,
  options: ReadCorpusOptions = {},
): AsyncGenerator<{ line: number; abstract: CorpusAbstract }> {
  let format = options.format ?? "auto";
  const seenEvidence = new Set<string>();
  const problem = (r: NumberedRow, field: string, reason: string) => {
    if (options.onSkip) options.onSkip(r.line, `${field}: ${reason}`);
    else throw new DataError(path, reason, { line: r.line, field });
  };
  for await (const r of readTable(path)) {
    if (format === "auto") format = detectFormat(path, r);
    if (format === "climate-fever") {
      const evidences = r.row.evidences;
      if (!Array.isArray(evidences)) {
        problem(r, "evidences", "expected an array of evidence objects");
        continue;
      }
      for (const e of evidences as Record<string, unknown>[]) {
        const id = cellString(e?.evidence_id as string);
        const text = cellString(e?.evidence as string);
        if (!id || !text) {
          problem(r, "evidences", "evidence without id or text");
          continue;
        }
        if (seenEvidence.has(id)) continue;
        seenEvidence.add(id);
        yield {
          line: r.line,
          abstract: { id, abstract: text, title: cellString(e.article as string), sentences: [text] },
        };
      }
      continue;
    }
    const idField =
      format === "scifact"
        ? "doc_id"
        : "abstract_original_index" in r.row && !("abstract_id" in r.row)
          ? "abstract_original_index"
          : "abstract_id";
    const id = cellString(r.row[idField]);
    if (!id) {
      problem(r, idField, "missing abstract id");
      continue;
    }
    const rawText = cellString(r.row.abstract);
    if (!rawText) {
      problem(r, "abstract", "missing abstract text");
      continue;
    }
    const abstract: CorpusAbstract = { id, abstract: rawText, title: cellString(r.row.title) };
    if (format === "scifact") {
      const sentences = parsePythonStringList(rawText)
        .map((s) => s.trim())
        .filter((s) => s !== "");
      if (sentences.length > 0) {
        abstract.sentences = sentences;
        abstract.abstract = sentences.join(" ");
      }
    } else {
      const doi = cellString(r.row.doi);
      const url = cellString(r.row.url);
      const source = cellString(r.row.source);
      const year = yearOf(r.row.year ?? r.row.publication_year ?? r.row.date);
      if (doi) abstract.doi = doi;
      if (url) abstract.url = url;
      if (source) abstract.source = source;
      if (year) abstract.year = year;
    }
    yield { line: r.line, abstract };
  }
}

/** Claims from a claims file or the labels file (`claim_id`, `claim`); one per id, first text wins. */
export async function readClaims(path: string): Promise<Claim[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["claim_id", "claim"]);
  // A claim repeated row by row (files with one row per claim-abstract pair) is read once; the same id with another
  // text is an error, since any choice between the two would be silent.
  const byId = new Map<string, Claim & { line: number }>();
  for (const r of rows) {
    const id = requireString(path, r, "claim_id");
    const text = requireString(path, r, "claim");
    const prev = byId.get(id);
    if (!prev) byId.set(id, { id, text, line: r.line });
    else if (prev.text !== text)
      throw new DataError(
        path,
        `duplicate claim id "${id}" with another claim text, first on line ${prev.line}`,
        {
          line: r.line,
          field: "claim_id",
        },
      );
  }
  return [...byId.values()].map(({ id, text }) => ({ id, text }));
}

/** Task 1 gold: (claim, abstract, annotation). The abstract column may be `abstract_original_index`. */
export async function readTask1Gold(path: string): Promise<LabelledPair[]> {
  const rows = await readAll(path);
  const abstractField = "abstract_id" in rows[0].row ? "abstract_id" : "abstract_original_index";
  requireColumns(path, rows[0], ["claim_id", abstractField, "annotation"]);
  const seen = new Map<string, number>();
  const pairs: LabelledPair[] = [];
  for (const r of rows) {
    const claimId = requireString(path, r, "claim_id");
    const abstractId = requireString(path, r, abstractField);
    const key = `${claimId}\u0000${abstractId}`;
    if (seen.has(key)) {
      throw new DataError(
        path,
        `duplicate gold pair (${claimId}, ${abstractId}), first on line ${seen.get(key)}`,
        {
          line: r.line,
          field: abstractField,
        },
      );
    }
    seen.set(key, r.line);
    pairs.push({ claimId, abstractId, label: requireLabel(path, r, "annotation") });
  }
  return pairs;
}

/** Task 2 gold: one example per claim from `claim_id`, `claim` (optional) and `narrative`. */
export async function readTask2Gold(path: string): Promise<NarrativeExample[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["claim_id", "narrative"]);
  const byId = new Map<string, NarrativeExample>();
  for (const r of rows) {
    const id = requireString(path, r, "claim_id");
    const codes = parseNarratives(path, r, "narrative");
    const prev = byId.get(id);
    if (!prev) byId.set(id, { id, text: cellString(r.row.claim) ?? "", codes });
    else if ([...codes].sort().join(";") !== [...prev.codes].sort().join(";")) {
      throw new DataError(path, `claim ${id} has different narratives on different rows`, {
        line: r.line,
        field: "narrative",
      });
    }
  }
  return [...byId.values()];
}

/** Task 1 predictions `claim_id,abstract_id,rank[,label]`; duplicates and bad ranks are errors. */
export async function readTask1Predictions(path: string): Promise<Task1Prediction[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["claim_id", "abstract_id", "rank"]);
  const hasLabel = "label" in rows[0].row;
  const seen = new Map<string, number>();
  return rows.map((r) => {
    const claimId = requireString(path, r, "claim_id");
    const abstractId = requireString(path, r, "abstract_id");
    const key = `${claimId}\u0000${abstractId}`;
    if (seen.has(key)) {
      throw new DataError(
        path,
        `duplicate prediction (${claimId}, ${abstractId}), first on line ${seen.get(key)}`,
        {
          line: r.line,
          field: "abstract_id",
        },
      );
    }
    seen.set(key, r.line);
    const rawRank = requireString(path, r, "rank");
    const rank = Number(rawRank);
    if (!/^\d+$/.test(rawRank) || rank < 1) {
      throw new DataError(path, `rank must be a whole number from 1, got "${rawRank}"`, {
        line: r.line,
        field: "rank",
      });
    }
    const p: Task1Prediction = { claimId, abstractId, rank };
    if (hasLabel && cellString(r.row.label) !== undefined) p.label = requireLabel(path, r, "label");
    return p;
  });
}

/** Task 2 predictions `claim_id,narrative` (an `abstract_id` column is ignored); one row per claim. */
export async function readTask2Predictions(path: string): Promise<Task2Prediction[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["claim_id", "narrative"]);
  const seen = new Map<string, number>();
  return rows.map((r) => {
    const claimId = requireString(path, r, "claim_id");
    if (seen.has(claimId)) {
      throw new DataError(
        path,
        `duplicate prediction for claim ${claimId}, first on line ${seen.get(claimId)}`,
        {
          line: r.line,
          field: "claim_id",
        },
      );
    }
    seen.set(claimId, r.line);
    return { claimId, codes: parseNarratives(path, r, "narrative") };
  });
}

export const TASK1_HEADER = ["claim_id", "abstract_id", "rank", "label"];
export const TASK2_HEADER = ["claim_id", "narrative"];

/** Writes task 1 predictions; the `label` column is left out when no prediction has a label (retrieval-only). */
export async function writeTask1Predictions(path: string, preds: Task1Prediction[]): Promise<void> {
  const withLabel = preds.some((p) => p.label !== undefined);
  const header = withLabel ? TASK1_HEADER : TASK1_HEADER.slice(0, 3);
  await writeCsv(
    path,
    header,
    preds.map((p) =>
      withLabel ? [p.claimId, p.abstractId, p.rank, p.label ?? ""] : [p.claimId, p.abstractId, p.rank],
    ),
  );
}

export async function writeTask2Predictions(path: string, preds: Task2Prediction[]): Promise<void> {
  await writeCsv(
    path,
    TASK2_HEADER,
    preds.map((p) => [p.claimId, p.codes.join(";")]),
  );
}
