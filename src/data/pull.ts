/**
 * `data pull`: downloads the ClimateCheck 2026 claims and publications corpus from the dataset hub (Hugging Face
 * dataset repos) into a local folder. Each file goes to `<name>.part` first and resumes with an HTTP Range
 * request after a dropped connection or an interrupted run; the finished file is checked against the size and
 * sha256 the hub reports (the git blob id for small non-LFS files) and recorded in manifest.json.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { get as httpGetPlain, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { dirname, join } from "node:path";
import { ServiceError } from "./errors.ts";
import { writeFileAtomic } from "./tables.ts";

export const HUB_BASE_URL = "https://huggingface.co";
export const HUB_REVISION = "main";

/** The shared task's dataset repos and the local folder each one goes to. */
export const DATASETS: readonly { repo: string; folder: string }[] = [
  { repo: "rabuahmad/climatecheck", folder: "claims" },
  { repo: "rabuahmad/climatecheck_publications_corpus", folder: "corpus" },
];

/** The files of a repo that are data (READMEs and .gitattributes are left out). */
export const DATA_FILE = /\.(parquet|csv|tsv|jsonl|json)(\.gz)?$/i;

export const MANIFEST = "manifest.json";

/** A user-facing failure of a pull (network, hub answer, checksum); the CLI prints its message. */
export class PullError extends ServiceError {
  constructor(message: string) {
    super(message);
    this.name = "PullError";
  }
}

export interface HubFile {
  repo: string;
  /** Path inside the repo. */
  path: string;
  /** Where it goes, relative to the pull folder (`<folder>/<path>`). */
  local: string;
  size?: number;
  /** sha256 of the content (LFS files). */
  sha256?: string;
  /** Git blob id (sha1 of "blob <size>\0" + content) for files stored in git itself. */
  gitOid?: string;
}

export interface ManifestEntry {
  repo: string;
  path: string;
  url: string;
  size: number;
  sha256: string;
  /** What the download was checked against. */
  verified: "sha256" | "git-oid" | "size" | "none";
  etag?: string;
  downloadedAt: string;
}

export interface PullManifest {
  source: string;
  revision: string;
  files: Record<string, ManifestEntry>;
}

export interface PullProgress {
  file: string;
  /** Bytes of this file on disk so far (resumed bytes included) and its size when known. */
  bytes: number;
  size?: number;
}

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

const trimSlash = (s: string) => s.replace(/\/+$/, "");

async function getJson(url: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" } });
  } catch (e) {
    throw new PullError(`cannot reach ${url} (${(e as Error).cause ?? (e as Error).message})`);
  }
  if (!res.ok) throw new PullError(`${url}: the hub answered HTTP ${res.status} ${res.statusText}`);
  try {
    return await res.json();
  } catch {
    throw new PullError(`${url}: the hub's answer is not JSON`);
  }
}

/** The data files of a dataset repo, with the sizes and checksums the hub reports. */
export async function listHubFiles(
  baseUrl: string,
  repo: string,
  folder: string,
  revision = HUB_REVISION,
): Promise<HubFile[]> {
  const url = `${trimSlash(baseUrl)}/api/datasets/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
  const listing = await getJson(url);
  if (!Array.isArray(listing)) throw new PullError(`${url}: expected a list of files`);
  const files: HubFile[] = [];
  for (const e of listing as {
    type?: string;
    path?: string;
    size?: number;
    oid?: string;
    lfs?: { oid?: string; size?: number };
  }[]) {
    if (e.type !== "file" || typeof e.path !== "string" || !DATA_FILE.test(e.path)) continue;
    files.push({
      repo,
      path: e.path,
      local: `${folder}/${e.path}`,
      size: e.lfs?.size ?? e.size,
      sha256: e.lfs?.oid,
      gitOid: e.lfs ? undefined : e.oid,
    });
  }
  if (files.length === 0) throw new PullError(`${url}: no data files in ${repo}`);
  return files;
}

export function resolveUrl(
  baseUrl: string,
  f: Pick<HubFile, "repo" | "path">,
  revision = HUB_REVISION,
): string {
  const path = f.path.split("/").map(encodeURIComponent).join("/");
  return `${trimSlash(baseUrl)}/datasets/${f.repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** sha256 of a file and its git blob id (one pass). */
async function digests(path: string, size: number): Promise<{ sha256: string; gitOid: string }> {
  const sha = createHash("sha256");
  const git = createHash("sha1").update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) {
    sha.update(chunk as Buffer);
    git.update(chunk as Buffer);
  }
  return { sha256: sha.digest("hex"), gitOid: git.digest("hex") };
}

/** GET with redirects followed (the hub sends LFS files to a CDN); headers such as Range go along. */
function httpGet(url: string, headers: Record<string, string>, redirects = 5): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith("https:") ? httpsGet : httpGetPlain;
    const req = get(url, { headers: { "user-agent": "climatecheck", ...headers } }, (res) => {
      const to = res.headers.location;
      if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && to) {
        res.resume();
        if (redirects <= 0) reject(new Error("too many redirects"));
        else httpGet(new URL(to, url).href, headers, redirects - 1).then(resolve, reject);
        return;
      }
      resolve(res);
    });
    req.on("error", reject);
  });
}

/**
 * Downloads `url` into `dest` through `dest.part`, resuming with Range after a dropped connection (up to
 * `retries` times) and across runs; returns the etag the server gave.
 */
async function download(
  url: string,
  dest: string,
  f: HubFile,
  retries: number,
  onBytes: (bytes: number) => void,
): Promise<string | undefined> {
  const part = `${dest}.part`;
  await mkdir(dirname(dest), { recursive: true });
  let etag: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const have = (await sizeOf(part)) ?? 0;
    if (f.size !== undefined && have === f.size) return etag;
    if (f.size !== undefined && have > f.size) await rm(part, { force: true });
    const from = f.size !== undefined && have > f.size ? 0 : have;
    let res: IncomingMessage;
    try {
      res = await httpGet(url, from > 0 ? { range: `bytes=${from}-` } : {});
    } catch (e) {
      if (attempt < retries) continue;
      throw new PullError(`cannot reach ${url} (${(e as Error).message}); run again to resume`);
    }
    const status = res.statusCode ?? 0;
    if (status === 416 && from > 0) {
      // Nothing past what we have: the part is complete when the size is unknown; the checksum decides.
      res.resume();
      return etag;
    }
    if (status >= 500 && attempt < retries) {
      res.resume();
      continue;
    }
    if (!(status === 200 || status === 206)) {
      res.resume();
      throw new PullError(`${url}: the hub answered HTTP ${status} ${res.statusMessage ?? ""}`.trim());
    }
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    etag = (header("x-linked-etag") ?? header("etag"))?.replace(/^W\//, "");
    // 206 continues the part; 200 (the server ignored the Range) starts it again.
    const append = status === 206 && from > 0;
    if (status === 206) {
      const start = Number(/bytes (\d+)-/.exec(header("content-range") ?? "")?.[1] ?? Number.NaN);
      if (start !== from) {
        res.resume();
        throw new PullError(`${url}: the server resumed at byte ${start}, not ${from}`);
      }
    }
    let bytes = append ? from : 0;
    onBytes(bytes);
    // Each chunk is written as it arrives, so whatever came before a drop is on disk to resume from.
    const fd = openSync(part, append ? "a" : "w");
    const dropped = await new Promise<Error | undefined>((resolve) => {
      res.on("data", (chunk: Buffer) => {
        writeSync(fd, chunk);
        bytes += chunk.length;
        onBytes(bytes);
      });
      res.once("end", () => resolve(undefined));
      res.once("aborted", () => resolve(new Error("connection closed mid-body")));
      res.once("error", (e) => resolve(e));
      res.once("close", () => resolve(res.complete ? undefined : new Error("connection closed mid-body")));
    });
    closeSync(fd);
    if (dropped) {
      if (attempt < retries) continue;
      throw new PullError(
        `${url}: the connection dropped at byte ${bytes} (${dropped.message}); run again to resume`,
      );
    }
    const length = Number(header("content-length") ?? Number.NaN);
    if (Number.isFinite(length) && bytes - (append ? from : 0) < length) {
      if (attempt < retries) continue;
      throw new PullError(`${url}: the connection dropped at byte ${bytes}; run again to resume`);
    }
    return etag;
  }
}

/** Checks the finished part against what the hub reported; a mismatch removes it (it cannot be resumed). */
async function verify(part: string, f: HubFile, url: string): Promise<Omit<ManifestEntry, "downloadedAt">> {
  const size = (await sizeOf(part)) ?? 0;
  const fail = async (what: string) => {
    await rm(part, { force: true });
    throw new PullError(`${url}: ${what}; the download was removed, run again to fetch it anew`);
  };
  if (f.size !== undefined && size !== f.size)
    await fail(`size mismatch: expected ${f.size} bytes, got ${size}`);
  const d = await digests(part, size);
  let verified: ManifestEntry["verified"] = f.size !== undefined ? "size" : "none";
  if (f.sha256) {
    if (d.sha256 !== f.sha256) await fail(`checksum mismatch: expected sha256 ${f.sha256}, got ${d.sha256}`);
    verified = "sha256";
  } else if (f.gitOid) {
    if (d.gitOid !== f.gitOid)
      await fail(`checksum mismatch: expected git blob ${f.gitOid}, got ${d.gitOid}`);
    verified = "git-oid";
  }
  return { repo: f.repo, path: f.path, url, size, sha256: d.sha256, verified };
}

async function readManifest(path: string): Promise<PullManifest | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as PullManifest;
  } catch {
    return undefined;
  }
}

/** Is the file already here, whole, as the manifest recorded it and the hub still reports it? */
async function isPresent(dir: string, f: HubFile, m: ManifestEntry | undefined): Promise<boolean> {
  if (!m) return false;
  if ((await sizeOf(join(dir, f.local))) !== m.size) return false;
  if (f.size !== undefined && f.size !== m.size) return false;
  return f.sha256 === undefined || f.sha256 === m.sha256;
}

export async function pullData(o: PullOptions): Promise<PullResult> {
  const baseUrl = o.baseUrl ?? HUB_BASE_URL;
  const revision = o.revision ?? HUB_REVISION;
  const manifestPath = join(o.dir, MANIFEST);
  const old = await readManifest(manifestPath);
  const manifest: PullManifest = {
    source: baseUrl,
    revision,
    files: old?.source === baseUrl ? { ...old.files } : {},
  };
  const result: PullResult = { manifest, downloaded: [], present: [] };
  for (const ds of o.datasets ?? DATASETS) {
    for (const f of await listHubFiles(baseUrl, ds.repo, ds.folder, revision)) {
      const dest = join(o.dir, f.local);
      if (await isPresent(o.dir, f, manifest.files[f.local])) {
        result.present.push(f.local);
        o.onFile?.(f.local, "present");
        continue;
      }
      const url = resolveUrl(baseUrl, f, revision);
      const etag = await download(url, dest, f, o.retries ?? 5, (bytes) =>
        o.onProgress?.({ file: f.local, bytes, size: f.size }),
      );
      const entry = await verify(`${dest}.part`, f, url);
      await rename(`${dest}.part`, dest);
      manifest.files[f.local] = { ...entry, etag, downloadedAt: new Date().toISOString() };
      await writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
      result.downloaded.push(f.local);
      o.onFile?.(f.local, "downloaded");
    }
  }
  await writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return result;
}
