/** Reading claim-abstract pair files and writing verdict files (the I/O of `climatecheck verify`). */
import {
  cellString,
  readAll,
  requireColumns,
  requireString,
  tableFormat,
  writeCsv,
  writeJsonl,
} from "../data/tables.ts";
import type { Verdict, VerifyPair } from "./verifier.ts";

export interface IdentifiedPair extends VerifyPair {
  claimId: string;
  abstractId: string;
}

export const PAIR_COLUMNS = ["claim_id", "claim", "abstract_id", "abstract"];
export const VERDICT_HEADER = [
  "claim_id",
  "abstract_id",
  "label",
  "confidence",
  "p_supports",
  "p_refutes",
  "p_nei",
  "rationale",
];

/** Pairs with `claim_id, claim, abstract_id, abstract` and optional `title` (CSV, JSONL or Parquet). */
export async function readPairs(path: string): Promise<IdentifiedPair[]> {
  const rows = await readAll(path);
  requireColumns(path, rows[0], PAIR_COLUMNS);
  return rows.map((r) => ({
    claimId: requireString(path, r, "claim_id"),
    claim: requireString(path, r, "claim"),
    abstractId: requireString(path, r, "abstract_id"),
    abstract: requireString(path, r, "abstract"),
    title: cellString(r.row.title),
  }));
}

const round = (x: number) => Number(x.toFixed(4));

/** Writes verdicts as CSV (rationale as a JSON list, e.g. "[2,5]") or JSON Lines (rationale as an array). */
export async function writeVerdicts(
  path: string,
  pairs: readonly IdentifiedPair[],
  verdicts: readonly Verdict[],
): Promise<void> {
  const rows = verdicts.map((v, i) => [
    pairs[i].claimId,
    pairs[i].abstractId,
    v.label,
    round(v.confidence),
    round(v.probs.supports),
    round(v.probs.refutes),
    round(v.probs.nei),
    v.rationale,
  ]);
  if (tableFormat(path).format === "jsonl") {
    await writeJsonl(
      path,
      rows.map((r) => Object.fromEntries(VERDICT_HEADER.map((h, k) => [h, r[k]]))),
    );
  } else {
    await writeCsv(
      path,
      VERDICT_HEADER,
      rows.map((r) => [...r.slice(0, 7), JSON.stringify(r[7])]),
    );
  }
}
