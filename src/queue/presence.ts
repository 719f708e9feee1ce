/**
 * Who can work on a run: workers check in on Redis every few seconds (Redis's own clock, so machines with skewed
 * clocks agree) and record each run they refuse, with the reason. `queue status` and `queue collect --wait` read
 * this to say when a run's chunks wait for nobody: every worker still around refused it, or no worker was seen
 * for WORKER_GONE_MS.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";

/** Hash of worker id -> last check-in (ms, Redis time). */
export const WORKERS_KEY = "climatecheck-workers";
/** Hash of worker id -> why it refused the run. */
export const refusalsKey = (run: string) => `climatecheck-refusals:${run}`;
/** A worker not seen for this long counts as gone (workers check in every 1-2 s, also while busy). */
export const WORKER_GONE_MS = 60_000;
/** Check-ins older than this are dropped when read (a worker that died without checking out). */
const FORGET_MS = 24 * 3600_000;

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
}

async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

export async function checkIn(redis: Redis, worker: string): Promise<void> {
  await redis.hset(WORKERS_KEY, worker, String(await redisNow(redis)));
}

/** A worker that stops cleanly leaves at once (one killed is gone after WORKER_GONE_MS). */
export async function checkOut(redis: Redis, worker: string): Promise<void> {
  await redis.hdel(WORKERS_KEY, worker);
}

export async function recordRefusal(
  redis: Redis,
  run: string,
  worker: string,
  reason: string,
): Promise<void> {
  await redis.hset(refusalsKey(run), worker, reason);
}

export interface Presence {
  /** Workers seen within WORKER_GONE_MS. */
  live: string[];
  /** Seconds since the last check-in of any worker; null when none ever checked in (or all checked out). */
  lastSeenSecondsAgo: number | null;
  /** Workers that refused the run (live or not), with the reason. */
  refusals: { worker: string; reason: string }[];
}

export async function presence(redis: Redis, run: string): Promise<Presence> {
  const now = await redisNow(redis);
  const seen = await redis.hgetall(WORKERS_KEY);
  const live: string[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const [worker, at] of Object.entries(seen)) {
    const age = now - Number(at);
    if (age > FORGET_MS) await redis.hdel(WORKERS_KEY, worker);
    else if (age <= WORKER_GONE_MS) live.push(worker);
    last = Math.max(last, Number(at));
  }
  const refusals = Object.entries(await redis.hgetall(refusalsKey(run))).map(([worker, reason]) => ({
    worker,
    reason,
  }));
  return {
    live: live.sort(),
    lastSeenSecondsAgo: Number.isFinite(last) ? Math.max(0, Math.round((now - last) / 1000)) : null,
    refusals: refusals.sort((a, b) => a.worker.localeCompare(b.worker)),
  };
}

/** Why no chunk of the run will be done with the workers there are, or undefined when one may still work. */
export function whyStuck(p: Presence): string | undefined {
  const refusedBy = new Set(p.refusals.map((r) => r.worker));
  // Identical reasons (one fleet, one wrong index) are said once.
  const reasons = [...new Set(p.refusals.map((r) => r.reason))];
  const said =
    reasons.slice(0, 3).join("; ") + (reasons.length > 3 ? `; ... (${reasons.length - 3} more)` : "");
  if (p.live.length > 0 && p.live.every((w) => refusedBy.has(w)))
    return `every worker seen in the last ${WORKER_GONE_MS / 1000} s (${p.live.length}) refused the run: ${said}`;
  if (p.live.length > 0) return undefined;
  const seen =
    p.lastSeenSecondsAgo === null ? "no worker is running" : `no worker seen for ${p.lastSeenSecondsAgo} s`;
  const refused = p.refusals.length ? `; ${p.refusals.length} worker(s) refused it: ${said}` : "";
  return `${seen}${refused}; start \`climatecheck queue work\` on a machine with the run's index and models`;
}
