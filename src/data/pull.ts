/**
 * `data pull`: the ClimateCheck 2026 claims and publications corpus from the dataset hub (Hugging Face dataset
 * repos) into a local folder, through the shared download module (src/data/download.ts: resumable `.part` files,
 * checksums, manifest.json).
 */
import { join } from "node:path";
import {
  fetchHubFiles,
  HUB_BASE_URL,
  HUB_REVISION,
  type HubAccess,
  hubToken,
  listHubFiles,
  MANIFEST,
  PullError,
  type PullManifest,
  type PullProgress,
  readPullManifest,
  writeManifest,
} from "./download.ts";

export { HUB_BASE_URL, HUB_REVISION, PullError, type PullManifest };

/** The shared task's dataset repos and the local folder each one goes to. */
export const DATASETS: readonly { repo: string; folder: string }[] = [
  { repo: "rabuahmad/climatecheck", folder: "claims" },
  { repo: "rabuahmad/climatecheck_publications_corpus", folder: "corpus" },
];

/** The files of a repo that are data (READMEs and .gitattributes are left out). */
export const DATA_FILE = /\.(parquet|csv|tsv|jsonl|json)(\.gz)?$/i;

export interface PullOptions {
  dir: string;
  baseUrl?: string;
  revision?: string;
  datasets?: readonly { repo: string; folder: string }[];
  /** Retries of one file after a dropped connection or a 5xx answer (each resumes). Default 5. */
  retries?: number;
  onProgress?: (p: PullProgress) => void;
  /** Each file as it is done: downloaded or already present. */
  onFile?: (local: string, status: "downloaded" | "present") => void;
}

export interface PullResult {
  manifest: PullManifest;
  downloaded: string[];
  present: string[];
}

export async function pullData(o: PullOptions): Promise<PullResult> {
  const hub: HubAccess = { baseUrl: o.baseUrl ?? HUB_BASE_URL, token: hubToken() };
  const revision = o.revision ?? HUB_REVISION;
  const old = await readPullManifest(join(o.dir, MANIFEST));
  const manifest: PullManifest = {
    source: hub.baseUrl,
    revision,
    files: old?.source === hub.baseUrl ? { ...old.files } : {},
  };
  const result: PullResult = { manifest, downloaded: [], present: [] };
  for (const ds of o.datasets ?? DATASETS) {
    const files = await listHubFiles(hub, "datasets", ds.repo, revision, (p) => DATA_FILE.test(p), ds.folder);
    if (files.length === 0)
      throw new PullError(`${hub.baseUrl}/api/datasets/${ds.repo}: no data files in ${ds.repo}`);
    const r = await fetchHubFiles(files, { ...o, dir: o.dir, hub, kind: "datasets", revision, manifest });
    result.downloaded.push(...r.downloaded);
    result.present.push(...r.present);
  }
  await writeManifest(o.dir, manifest);
  return result;
}
