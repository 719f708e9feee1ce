/**
 * Readers of our own written data in data/ (data/judged/README.md, data/abstract-claims/README.md): claims as people
 * post them with judged claim-abstract pairs on the built-in corpus, and claims written from abstracts. One reader
 * per file kind; every problem names the file, the line and the field.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isNarrativeCode } from "../taxonomy/cards.ts";
import { isTopicCode } from "../taxonomy/topics.ts";
import { type Label, NEI, parseLabel } from "../types.ts";
import { DataError } from "./errors.ts";
import { PACKAGE_ROOT } from "./paths.ts";
import { cellString, type NumberedRow, readAll, requireString } from "./tables.ts";

export type JudgedSplit = "train" | "dev" | "test";

/** The style of the short plain claims ("Sea level rise is accelerating."), which benchmarks report apart. */
export const SHORT_PLAIN = "short plain";

export interface JudgedClaim {
  id: string;
  claim: string;
  /** Whether the claim is accurate mainstream science or a contrarian narrative (the writer's intent). */
  stance: "accurate" | "contrarian";
  subject: string;
  /** CARDS codes the claim asserts (["0_0"] for an accurate claim). */
  cards: string[];
  /** How it is worded ("short plain", "sarcasm, hashtag", ...): benchmarks report some styles apart. */
  style: string;
  split: JudgedSplit;
}

/** One judge's reading of one claim-abstract pair (data/judged/GUIDELINES.md). */
export interface Judgement {
  claimId: string;
  abstractId: string;
  /** Whether the abstract is about the claim's subject. */
  about: boolean;
  label: Label;
  /** The deciding sentences, verbatim (empty for NEI). */
  evidence: string[];
  judge: string;
}

/** A claim written from one abstract, labelled by construction (data/abstract-claims/GUIDELINES.md). */
export interface WrittenClaim {
  id: string;
  abstractId: string;
  claim: string;
  label: Label;
  evidence: string[];
  writer: string;
}

/** Where our written data lives (the repository's data/ folder). */
export function ownDataFiles(dir = join(PACKAGE_ROOT, "data")) {
  return {
    claims: join(dir, "judged", "claims.jsonl"),
    judgements: join(dir, "judged", "judgements.jsonl"),
    secondJudgements: join(dir, "judged", "judgements-second.jsonl"),
    writtenClaims: join(dir, "abstract-claims", "claims.jsonl"),
    abstractSubjects: join(dir, "abstract-subjects", "abstracts.jsonl"),
    abstractSubjectsSecond: join(dir, "abstract-subjects", "abstracts-second.jsonl"),
    claimSubjects: join(dir, "abstract-subjects", "claims.jsonl"),
    claimSubjectsSecond: join(dir, "abstract-subjects", "claims-second.jsonl"),
    contrastSubjects: join(dir, "abstract-subjects", "contrast-subjects.json"),
  };
}

function oneOf<T extends string>(file: string, r: NumberedRow, field: string, values: readonly T[]): T {
  const v = requireString(file, r, field);
  if (!(values as readonly string[]).includes(v))
    throw new DataError(file, `expected one of ${values.join(", ")}, got "${v}"`, { line: r.line, field });
  return v as T;
}

function stringList(file: string, r: NumberedRow, field: string): string[] {
  const v = r.row[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    throw new DataError(file, "expected a list of strings", { line: r.line, field });
  return v as string[];
}

function label(file: string, r: NumberedRow): Label {
  const raw = requireString(file, r, "label");
  const l = parseLabel(raw);
  if (!l || l !== raw)
    throw new DataError(file, `expected Supports, Refutes or Not Enough Information, got "${raw}"`, {
      line: r.line,
      field: "label",
    });
  return l;
}

export async function readJudgedClaims(file: string): Promise<JudgedClaim[]> {
  const seen = new Set<string>();
  return (await readAll(file)).map((r) => {
    const id = requireString(file, r, "claim_id");
    if (seen.has(id))
      throw new DataError(file, `claim "${id}" appears twice`, { line: r.line, field: "claim_id" });
    seen.add(id);
    const cards = stringList(file, r, "cards");
    const bad = cards.find((c) => !isNarrativeCode(c));
    if (bad !== undefined || cards.length === 0)
      throw new DataError(file, `expected CARDS codes, got ${JSON.stringify(cards)}`, {
        line: r.line,
        field: "cards",
      });
    return {
      id,
      claim: requireString(file, r, "claim"),
      stance: oneOf(file, r, "stance", ["accurate", "contrarian"] as const),
      subject: requireString(file, r, "subject"),
      cards,
      style: cellString(r.row.style) ?? "",
      split: oneOf(file, r, "split", ["train", "dev", "test"] as const),
    };
  });
}

/** Judgements, one per (claim, abstract); a pair judged twice in one file is an error (second judges have their own file). */
export async function readJudgements(file: string): Promise<Judgement[]> {
  const seen = new Set<string>();
  return (await readAll(file)).map((r) => {
    const claimId = requireString(file, r, "claim_id");
    const abstractId = requireString(file, r, "abstract_id");
    const key = `${claimId}\t${abstractId}`;
    if (seen.has(key))
      throw new DataError(file, `pair ${claimId} / ${abstractId} is judged twice`, {
        line: r.line,
        field: "abstract_id",
      });
    seen.add(key);
    const about = r.row.about;
    if (typeof about !== "boolean")
      throw new DataError(file, "expected true or false", { line: r.line, field: "about" });
    const l = label(file, r);
    if (!about && l !== NEI)
      throw new DataError(file, "a pair not about the claim is Not Enough Information", {
        line: r.line,
        field: "label",
      });
    const evidence = stringList(file, r, "evidence");
    if (l !== NEI && evidence.length === 0)
      throw new DataError(file, `${l} needs its deciding sentence`, { line: r.line, field: "evidence" });
    return { claimId, abstractId, about, label: l, evidence, judge: requireString(file, r, "judge") };
  });
}

/** Claims written from abstracts; lines that record a skipped abstract (`skip`) are passed over. */
export async function readWrittenClaims(file: string): Promise<WrittenClaim[]> {
  const out: WrittenClaim[] = [];
  for (const r of await readAll(file)) {
    if (r.row.skip !== undefined) continue;
    const l = label(file, r);
    const evidence = stringList(file, r, "evidence");
    if (l !== NEI && evidence.length === 0)
      throw new DataError(file, `${l} needs its deciding sentence`, { line: r.line, field: "evidence" });
    out.push({
      id: requireString(file, r, "id"),
      abstractId: requireString(file, r, "abstract_id"),
      claim: requireString(file, r, "claim"),
      label: l,
      evidence,
      writer: requireString(file, r, "writer"),
    });
  }
  return out;
}

/** The subject codes of one text (data/abstract-subjects/GUIDELINES.md): the main one, then up to two more. */
export interface SubjectLabel {
  id: string;
  main: string;
  also: string[];
  annotator: string;
}

/** Subject labels of abstracts or claims, one per id. */
export async function readSubjectLabels(file: string): Promise<SubjectLabel[]> {
  const seen = new Set<string>();
  return (await readAll(file)).map((r) => {
    const id = requireString(file, r, "id");
    if (seen.has(id)) throw new DataError(file, `"${id}" is labelled twice`, { line: r.line, field: "id" });
    seen.add(id);
    const main = requireString(file, r, "main");
    if (!isTopicCode(main))
      throw new DataError(file, `unknown subject code "${main}"`, { line: r.line, field: "main" });
    const also = stringList(file, r, "also");
    const bad = also.find((c) => !isTopicCode(c) || c === main);
    if (bad !== undefined || also.length > 2)
      throw new DataError(file, `expected at most two other known codes, got ${JSON.stringify(also)}`, {
        line: r.line,
        field: "also",
      });
    return { id, main, also, annotator: requireString(file, r, "annotator") };
  });
}

/** The subject code of each narratives contrast subject tag (data/abstract-subjects/contrast-subjects.json). */
export async function readContrastSubjects(file: string): Promise<Map<string, string>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (e) {
    throw new DataError(file, `not a JSON object of subject tags (${(e as Error).message})`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new DataError(file, "expected a JSON object: subject tag -> code");
  const out = new Map<string, string>();
  for (const [tag, code] of Object.entries(json)) {
    if (typeof code !== "string" || !isTopicCode(code))
      throw new DataError(file, `unknown subject code ${JSON.stringify(code)}`, { field: tag });
    out.set(tag, code);
  }
  return out;
}
