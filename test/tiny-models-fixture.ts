/**
 * The tiny random-weight models of bench/fixtures/tiny-models.ts, built once per version of that file and kept in
 * the temp folder, so every test file (and every run) after the first reuses them.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TinyModelDirs, writeTinyModels } from "../bench/fixtures/tiny-models.ts";

const WRITER = new URL("../bench/fixtures/tiny-models.ts", import.meta.url);

export function tinyModels(): TinyModelDirs {
  const version = createHash("sha256").update(readFileSync(WRITER)).digest("hex").slice(0, 12);
  const root = join(tmpdir(), `climatecheck-tiny-models-${version}`);
  if (!existsSync(root)) {
    // Written aside and renamed into place: a folder that exists is complete.
    const tmp = mkdtempSync(`${root}.tmp-`);
    writeTinyModels(tmp);
    try {
      renameSync(tmp, root);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another test process got there first
    }
  }
  return {
    embedding: join(root, "embedding"),
    crossEncoder: join(root, "cross-encoder"),
    nli: join(root, "nli"),
  };
}
