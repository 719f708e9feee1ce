/**
 * Adapters from our training sets in ../shared/data (SciFact, Climate-FEVER, CARDS, FLICC, and the mainstream climate
 * text of ClimateStance, ClimateBERT and environmental-claims) to the project's types.
 */
import { normaliseNarrativeCode } from "../taxonomy/cards.ts";
import type { CorpusAbstract, Label, NarrativeExample } from "../types.ts";
import { DataError } from "./errors.ts";
import { cellString, type NumberedRow, readAll, requireColumns, requireString } from "./tables.ts";

/** Parses a Python/numpy-style list of quoted string literals: `['a.'\n "b's"]` -> ["a.", "b's"]. */
export function parsePythonStringList(text: string): string[] {
  const out: string[] = [];
  const literal = /'((?:[^'\\]|\\[\s\S])*)'|"((?:[^"\\]|\\[\s\S])*)"/g;
  for (const m of text.matchAll(literal)) out.push(unescapePython(m[1] ?? m[2] ?? ""));
  return out;
}

function unescapePython(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\s\S])/g, (_m, e: string) => {
    switch (e[0]) {
      case "n":
        return "\n";
      case "t":
        return "\t";
      case "r":
        return "\r";
      case "x":
      case "u":
      case "U":
        return e.length > 1 ? String.fromCodePoint(Number.parseInt(e.slice(1), 16)) : e;
      default:
        return e;
    }
  });
}

/** Parses a numpy-style integer list `[2 5]` (commas allowed) into strings. */
export function parseIdList(text: string | undefined): string[] {
  if (!text) return [];
  return text
    .replace(/[[\]]/g, " ")
    .split(/[\s,]+/)
    .filter((t) => t !== "");
}

export async function readSciFactCorpus(path: string): Promise<CorpusAbstract[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["doc_id", "title", "abstract"]);
  return rows.map((r) => {
    const sentences = parsePythonStringList(requireString(path, r, "abstract"))
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (sentences.length === 0)
      throw new DataError(path, "no sentences in abstract", { line: r.line, field: "abstract" });
    return {
      id: requireString(path, r, "doc_id"),
      title: cellString(r.row.title),
      abstract: sentences.join(" "),
      sentences,
    };
  });
}

export interface SciFactEvidence {
  label: "Supports" | "Refutes";
  /** Rationale sentence indices (union over the claim's rationales for this abstract). */
  sentences: number[];
}

export interface SciFactClaim {
  id: string;
  claim: string;
  /** Evidence abstracts by doc id. */
  evidence: Map<string, SciFactEvidence>;
  /** Abstracts cited by the claim's source (include the evidence ones). */
  cited: string[];
}

export async function readSciFactClaims(path: string): Promise<SciFactClaim[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["id", "claim", "evidence_doc_id", "evidence_label", "evidence_sentences"]);
  const byId = new Map<string, SciFactClaim>();
  for (const r of rows) {
    const id = requireString(path, r, "id");
    let c = byId.get(id);
    if (!c) {
      c = {
        id,
        claim: requireString(path, r, "claim"),
        evidence: new Map(),
        cited: parseIdList(cellString(r.row.cited_doc_ids)),
      };
      byId.set(id, c);
    }
    const doc = cellString(r.row.evidence_doc_id);
    if (!doc) continue;
    const raw = cellString(r.row.evidence_label);
    if (raw !== "SUPPORT" && raw !== "CONTRADICT") {
      throw new DataError(path, `unknown evidence label "${raw}" (expected SUPPORT or CONTRADICT)`, {
        line: r.line,
        field: "evidence_label",
      });
    }
    const label = raw === "SUPPORT" ? "Supports" : "Refutes";
    const sentences = parseIdList(cellString(r.row.evidence_sentences)).map(Number);
    const prev = c.evidence.get(doc);
    if (prev) prev.sentences = [...new Set([...prev.sentences, ...sentences])].sort((a, b) => a - b);
    else c.evidence.set(doc, { label, sentences });
  }
  return [...byId.values()];
}

export interface ClimateFeverEvidence {
  id: string;
  label: Label;
  article: string;
  text: string;
  /** Share of the annotators' votes that agree with `label` (1 when the file has no votes). */
  agreement: number;
}

export interface ClimateFeverClaim {
  id: string;
  claim: string;
  claimLabel: "SUPPORTS" | "REFUTES" | "NOT_ENOUGH_INFO" | "DISPUTED";
  evidences: ClimateFeverEvidence[];
}

const FEVER_LABELS: Record<string, Label> = {
  SUPPORTS: "Supports",
  REFUTES: "Refutes",
  NOT_ENOUGH_INFO: "Not Enough Information",
};

export async function readClimateFever(path: string): Promise<ClimateFeverClaim[]> {
  const rows = await readAll(path);
  return rows.map((r) => {
    const claimLabel = requireString(path, r, "claim_label");
    if (!["SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO", "DISPUTED"].includes(claimLabel)) {
      throw new DataError(path, `unknown claim label "${claimLabel}"`, {
        line: r.line,
        field: "claim_label",
      });
    }
    const evidences = r.row.evidences;
    if (!Array.isArray(evidences))
      throw new DataError(path, "expected an array", { line: r.line, field: "evidences" });
    return {
      id: requireString(path, r, "claim_id"),
      claim: requireString(path, r, "claim"),
      claimLabel: claimLabel as ClimateFeverClaim["claimLabel"],
      evidences: evidences.map((e, i) => {
        const ev = e as Record<string, unknown>;
        const field = `evidences[${i}]`;
        const label = FEVER_LABELS[String(ev.evidence_label)];
        if (!label)
          throw new DataError(path, `unknown evidence label "${ev.evidence_label}"`, { line: r.line, field });
        if (typeof ev.evidence !== "string" || typeof ev.evidence_id !== "string") {
          throw new DataError(path, "evidence text or id missing", { line: r.line, field });
        }
        const votes = Array.isArray(ev.votes) ? ev.votes.filter((v) => typeof v === "string") : [];
        const agreement = votes.length
          ? votes.filter((v) => v === ev.evidence_label).length / votes.length
          : 1;
        return { id: ev.evidence_id, label, article: String(ev.article ?? ""), text: ev.evidence, agreement };
      }),
    };
  });
}

function narrativeRows(
  path: string,
  rows: NumberedRow[],
  textField: string,
  codeField: string,
  prefix: string,
) {
  const examples: NarrativeExample[] = [];
  let skipped = 0;
  for (const r of rows) {
    const raw = cellString(r.row[codeField]);
    if (raw === undefined) {
      skipped++;
      continue;
    }
    const code = normaliseNarrativeCode(raw);
    if (!code) throw new DataError(path, `unknown CARDS code "${raw}"`, { line: r.line, field: codeField });
    examples.push({ id: `${prefix}:${r.line}`, text: requireString(path, r, textField), codes: [code] });
  }
  return { examples, skipped };
}

/** CARDS (`text`, `claim`): one code per paragraph, `0_0` for none. */
export async function readCards(path: string): Promise<NarrativeExample[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["text", "claim"]);
  return narrativeRows(path, rows, "text", "claim", "cards").examples;
}

/** FLICC (`text`, `Claim` as a dotted level-3 code): codes cut to level 2; rows without a code are skipped. */
export async function readFlicc(path: string): Promise<{ examples: NarrativeExample[]; skipped: number }> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["text", "Claim"]);
  return narrativeRows(path, rows, "text", "Claim", "flicc");
}

/** A `text,label` file whose labels must be one of `labels` (ClimateStance, ClimateBERT climate detection). */
async function readLabelledTexts<L extends string>(
  path: string,
  labels: readonly L[],
): Promise<{ text: string; label: L; line: number }[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], ["text", "label"]);
  return rows.map((r) => {
    const label = requireString(path, r, "label");
    if (!(labels as readonly string[]).includes(label))
      throw new DataError(path, `label must be one of ${labels.join(", ")}, got "${label}"`, {
        line: r.line,
        field: "label",
      });
    return { text: requireString(path, r, "text"), label: label as L, line: r.line };
  });
}

export type Stance = "Favor" | "Against" | "Ambiguous";

/** ClimateStance tweets (`text`, `label` Favor / Against / Ambiguous). */
export async function readClimateStance(
  path: string,
): Promise<{ id: string; text: string; stance: Stance }[]> {
  const rows = await readLabelledTexts(path, ["Favor", "Against", "Ambiguous"] as const);
  return rows.map((r) => ({ id: `stance:${r.line}`, text: r.text, stance: r.label }));
}

/**
 * Distinct texts of one or more `text`-column files (ClimateBERT's sets, environmental-claims), labels ignored:
 * every row is mainstream climate language. Ids are `prefix:file-index:line` of the first occurrence.
 */
export async function readTexts(
  paths: readonly string[],
  prefix: string,
): Promise<{ id: string; text: string }[]> {
  const seen = new Set<string>();
  const out: { id: string; text: string }[] = [];
  for (const [k, path] of paths.entries()) {
    const rows = await readAll(path);
    requireColumns(path, rows[0], ["text"]);
    for (const r of rows) {
      const text = requireString(path, r, "text").trim();
      if (text === "" || seen.has(text)) continue;
      seen.add(text);
      out.push({ id: `${prefix}:${k}:${r.line}`, text });
    }
  }
  return out;
}

/** ClimateBERT climate detection (`text`, `label` yes / no): is a report paragraph about climate? */
export async function readClimateDetect(
  path: string,
): Promise<{ text: string; climate: boolean; line: number }[]> {
  const rows = await readLabelledTexts(path, ["yes", "no"] as const);
  return rows.map((r) => ({ text: r.text, climate: r.label === "yes", line: r.line }));
}

export type GwsdStance = "agree" | "neutral" | "disagree";

/**
 * GWSD (Luo, Card and Jurafsky 2020; `sentence`, `agree` / `neutral` / `disagree` probabilities of the stance
 * towards "climate change is a serious concern", `in_held_out_test`): each sentence's most probable stance. Rows
 * without the authors' estimate (the screening rows and some more) are skipped.
 */
export async function readGwsd(
  path: string,
): Promise<{ id: string; text: string; stance: GwsdStance; heldOut: boolean }[]> {
  const rows = await readAll(path);
  const stances = ["agree", "neutral", "disagree"] as const;
  requireColumns(path, rows[0], ["sentence", ...stances, "in_held_out_test"]);
  const out: { id: string; text: string; stance: GwsdStance; heldOut: boolean }[] = [];
  for (const r of rows) {
    const cells = stances.map((s) => cellString(r.row[s]));
    if (cells.every((c) => c === undefined)) continue;
    const p = cells.map((c, k) => {
      const v = Number(c);
      if (c === undefined || !Number.isFinite(v) || v < 0 || v > 1)
        throw new DataError(path, `expected a probability, got "${c ?? ""}"`, {
          line: r.line,
          field: stances[k],
        });
      return v;
    });
    const held = requireString(path, r, "in_held_out_test");
    if (held !== "True" && held !== "False")
      throw new DataError(path, `expected True or False, got "${held}"`, {
        line: r.line,
        field: "in_held_out_test",
      });
    out.push({
      id: `gwsd:${r.line}`,
      text: requireString(path, r, "sentence"),
      stance: stances[p.indexOf(Math.max(...p))],
      heldOut: held === "True",
    });
  }
  return out;
}
