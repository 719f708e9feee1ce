/** A progress bar with rate and ETA for a batch run, on a terminal only (quiet in a pipe or a log file). */
import cliProgress from "cli-progress";

export interface ProgressReporter {
  update(done: number, total: number, resumed: number): void;
  stop(): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} |{bar}| {percentage}% · {value}/{total} claims · {rate} claims/s · ETA {eta_formatted}`,
      stream,
      etaBuffer: 50,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = 0;
  let t0 = 0;
  return {
    update(done, total, resumed) {
      if (!started) {
        started = 1;
        t0 = Date.now();
        bar.start(total, done, { rate: "-" });
        return;
      }
      // The rate counts this run's claims only; resumed ones came from the checkpoint.
      const rate = (done - resumed) / Math.max((Date.now() - t0) / 1000, 1e-3);
      bar.update(done, { rate: rate.toFixed(1) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
