/**
 * The CodaBench submission: `predictions.zip` holding `predictions.csv`. fflate: no dependencies, its own types,
 * and the file is a few MB at most, so building it in memory is simplest.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { zipSync } from "fflate";
import { writeFileAtomic } from "../data/tables.ts";

export const SUBMISSION_ZIP = "predictions.zip";
export const SUBMISSION_ENTRY = "predictions.csv";
/** A fixed entry time, so the same predictions give the same zip bytes. */
const ENTRY_TIME = new Date(2026, 0, 1);

/** Writes predictions.zip beside `csv` (atomically) and returns its path. */
export async function writeSubmissionZip(csv: string): Promise<string> {
  const zip = zipSync({ [SUBMISSION_ENTRY]: [await readFile(csv), { level: 9, mtime: ENTRY_TIME }] });
  const path = join(dirname(csv), SUBMISSION_ZIP);
  await writeFileAtomic(path, zip);
  return path;
}
