/** Reading a shipped model artifact (models/<name>/model.json): one clear error for a missing or foreign file. */
import { readFile } from "node:fs/promises";
import { DataError } from "./errors.ts";

/** The parsed model, or a DataError naming the file and the command that trains it. */
export async function loadModelFile<T>(path: string, name: string, make: (json: unknown) => T): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new DataError(path, `no ${name} model here (train one with \`climatecheck-train ${name}\`)`);
  }
  try {
    return make(JSON.parse(text));
  } catch (e) {
    throw new DataError(path, `not a ${name} model (${(e as Error).message})`);
  }
}
