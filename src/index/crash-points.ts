/**
 * Fault injection for the crash-safety tests: with CLIMATECHECK_KILL_AT=N the process kills itself with SIGKILL at
 * the Nth crash point it reaches (no cleanup, no flush: what a power cut or an OOM kill leaves). With
 * CLIMATECHECK_KILL_TRACE set, each point reached is written to stderr as "crash point N LABEL" (how the test
 * learns the points of an uninterrupted run). Without either variable a crash point costs one comparison.
 */
const killAt = Number(process.env.CLIMATECHECK_KILL_AT ?? 0) || 0;
const trace = Boolean(process.env.CLIMATECHECK_KILL_TRACE);
let reached = 0;

export function crashPoint(label: string): void {
  if (!killAt && !trace) return;
  reached++;
  if (trace) process.stderr.write(`crash point ${reached} ${label}\n`);
  if (reached === killAt) process.kill(process.pid, "SIGKILL");
}
