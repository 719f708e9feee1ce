/** Opens a finished index for search, refusing one of another schema version or an unfinished ingest. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError } from "../data/errors.ts";
import { Bm25Index } from "./bm25.ts";
import { verifyFiles } from "./checksums.ts";
import { DocStore } from "./docstore.ts";
import { readIvf } from "./ivf.ts";
import { FILES, type Manifest, readManifest } from "./schema.ts";
import { VectorSet } from "./vectors.ts";

export interface OpenIndex {
  dir: string;
  manifest: Manifest;
  docs: DocStore;
  bm25: Bm25Index;
  /** Vector sets by name (empty for an index built with --no-vectors). */
  vectors: Record<string, VectorSet>;
  close(): void;
}

export function openIndex(dirArg: string): OpenIndex {
  const dir = resolve(dirArg);
  const manifest = readManifest(dir);
  if (!manifest.complete) {
    throw new DataError(
      dir,
      "the ingest into this index did not finish; run the same `climatecheck ingest` again to resume it",
    );
  }
  // Checked before anything is read: a torn or damaged file stops here, never gives wrong results.
  if (manifest.files) {
    const appendOnly = new Set([FILES.docs, ...Object.keys(manifest.vectors).map(FILES.vectors)]);
    verifyFiles(dir, manifest.files, appendOnly);
  }
  const docs = new DocStore(dir);
  if (!manifest.bm25)
    throw new DataError(dir, "index manifest has no BM25 settings; delete the index and ingest again");
  const { analyzer, k1, b, titleWeight } = manifest.bm25;
  const bm25 = new Bm25Index(dir, { analyzer, params: { k1, b, titleWeight } });
  if (docs.size !== manifest.committed.docs || bm25.size !== docs.size) {
    docs.close();
    throw new DataError(dir, "index files disagree with the manifest; delete the index and ingest again");
  }
  const vectors: Record<string, VectorSet> = {};
  for (const [name, info] of Object.entries(manifest.vectors)) {
    if (info.docs !== docs.size) {
      docs.close();
      throw new DataError(
        dir,
        `vector set "${name}" covers ${info.docs} of ${docs.size} abstracts; run ingest again to finish it`,
      );
    }
    const ivfPath = join(dir, FILES.ivf(name));
    const ivf = existsSync(ivfPath) ? readIvf(ivfPath) : undefined;
    vectors[name] = new VectorSet(join(dir, FILES.vectors(name)), info.dim, docs.size, ivf);
  }
  return { dir, manifest, docs, bm25, vectors, close: () => docs.close() };
}
