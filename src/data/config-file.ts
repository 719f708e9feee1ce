/** Reads a JSON config file checked against a zod schema: the whole file, or one named section of it. */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { resolveModelRefs } from "../models/profile.ts";
import { DataError } from "./errors.ts";

/** The stage sections of a profile (profiles/*.json); a profile may leave any of them out. */
export const PROFILE_SECTIONS = ["retrieval", "verification", "narratives"] as const;

/**
 * `section` of the file, validated. Without that section, a file is taken as the section alone (a plain verifier
 * config) unless `only` is set or it is a profile (it has another stage's section): then it gives `fallback` (the
 * stage stays built-in) when there is one.
 */
export async function readJsonConfig<S extends z.ZodType>(
  path: string,
  schema: S,
  section: string,
  fallback?: z.infer<S>,
  only = false,
): Promise<z.infer<S>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (e) {
    throw new DataError(path, `not a readable JSON file (${(e as Error).message})`);
  }
  const record = value as Record<string, unknown> | null;
  const isProfile = PROFILE_SECTIONS.some((s) => record?.[s] !== undefined);
  if (fallback !== undefined && (isProfile || only) && record?.[section] === undefined) return fallback;
  // A project-wide config may keep each part's settings under its own key.
  const inSection = record?.[section] !== undefined;
  // Models named by hub repository become their folders in the local cache (or stop with the pull command).
  const part = resolveModelRefs(record?.[section] ?? value, path, inSection ? section : "");
  const parsed = schema.safeParse(part);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = [...(inSection ? [section] : []), ...(issue?.path ?? [])];
    throw new DataError(path, issue?.message ?? `invalid ${section} config`, {
      field: field.join(".") || undefined,
    });
  }
  return parsed.data;
}
