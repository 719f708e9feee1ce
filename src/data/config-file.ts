/** Reads a JSON config file checked against a zod schema: the whole file, or one named section of it. */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { DataError } from "./errors.ts";

export async function readJsonConfig<S extends z.ZodType>(
  path: string,
  schema: S,
  section: string,
): Promise<z.infer<S>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (e) {
    throw new DataError(path, `not a readable JSON file (${(e as Error).message})`);
  }
  // A project-wide config may keep each part's settings under its own key.
  const part = (value as Record<string, unknown> | null)?.[section] ?? value;
  const parsed = schema.safeParse(part);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DataError(path, issue?.message ?? `invalid ${section} config`, {
      field: issue?.path.join("."),
    });
  }
  return parsed.data;
}
