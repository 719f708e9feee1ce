/** The progress of a pull (data pull, models pull): a bar per file on a terminal, a line per finished file always. */
import cliProgress from "cli-progress";
import type { PullProgress } from "../data/download.ts";

export interface DownloadProgress {
  onProgress: (p: PullProgress) => void;
  onFile: (local: string, status: "downloaded" | "present") => void;
  stop(): void;
}

const mb = (b: number) => (b / 2 ** 20).toFixed(1);

/** `prefix` goes before each file name (e.g. the repository of a model). */
export function downloadProgress(stream: NodeJS.WriteStream = process.stderr, prefix = ""): DownloadProgress {
  const bar = stream.isTTY
    ? new cliProgress.SingleBar(
        {
          format:
            "{file} |{bar}| {percentage}% · {value_mb}/{total_mb} MB · {speed} MB/s · ETA {eta_formatted}",
          stream,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let current = "";
  let t0 = 0;
  let b0 = 0;
  return {
    onProgress: (p) => {
      if (!bar) return;
      const total = p.size ?? p.bytes;
      if (p.file !== current) {
        bar.stop();
        current = p.file;
        t0 = Date.now();
        b0 = p.bytes;
        bar.start(total, p.bytes, {
          file: prefix + p.file,
          value_mb: mb(p.bytes),
          total_mb: mb(total),
          speed: "-",
        });
      }
      const speed = (p.bytes - b0) / 2 ** 20 / Math.max((Date.now() - t0) / 1000, 1e-3);
      bar.update(p.bytes, { value_mb: mb(p.bytes), speed: speed.toFixed(1) });
    },
    onFile: (local, status) => {
      bar?.stop();
      current = "";
      stream.write(`${status === "present" ? "already here" : "downloaded"}: ${prefix}${local}\n`);
    },
    stop: () => bar?.stop(),
  };
}
