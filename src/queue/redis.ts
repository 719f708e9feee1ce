/**
 * Redis connections of the queue commands (ioredis, as BullMQ expects). URLs are redis:// or rediss:// (TLS), with
 * an optional password; only the redacted form of a URL is ever printed.
 */
import { Redis } from "ioredis";
import { DataError, ServiceError } from "../data/errors.ts";

/** BullMQ key prefix of every run's queue; a run's queue is named after the run. */
export const QUEUE_PREFIX = "climatecheck";
/** Hash of run name -> RunRecord JSON (outside the BullMQ prefix, so no run name can collide with it). */
export const RUNS_KEY = "climatecheck-runs";

/** The URL with its password (and any query string) replaced, for messages and status output. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    u.search = "";
    return u.toString();
  } catch {
    return "(unparsable Redis URL)";
  }
}

function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new DataError(
      "--redis",
      "not a URL; expected redis://[:password@]host[:port][/db] or rediss://...",
    );
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new DataError("--redis", `unsupported scheme "${u.protocol}" (expected redis: or rediss:)`);
}

/** How long a worker (or a waiting collect) started while Redis is away waits for it: an AOF replay's worth. */
export const WORKER_START_WAIT_MS = 60_000;

/**
 * Opens a connection and waits until Redis answers. `worker`: retries every command until Redis is back (what
 * BullMQ needs for a worker's blocking calls and to ride out a Redis restart), and waits up to `startWaitMs` for a
 * Redis that is away when it starts (a restart under way); otherwise a few tries, then a clear error, for the
 * short-lived commands.
 */
export async function connectRedis(
  url: string,
  o: { worker?: boolean; log?: (m: string) => void; startWaitMs?: number } = {},
): Promise<Redis> {
  checkUrl(url);
  const where = redactUrl(url);
  const redis = new Redis(url, {
    maxRetriesPerRequest: o.worker ? null : 2,
    connectTimeout: 5000,
    lazyConnect: true,
    retryStrategy: o.worker ? (n) => Math.min(100 * n, 2000) : (n) => (n > 3 ? null : 200 * n),
  });
  let last = "";
  redis.on("error", (e: Error) => {
    // ioredis repeats the same error on every reconnect attempt: say each new one once.
    if (e.message !== last) o.log?.(`redis ${where}: ${e.message}`);
    last = e.message;
  });
  redis.on("ready", () => {
    last = "";
  });
  try {
    await redis.connect().catch(async (e: unknown) => {
      // ioredis keeps reconnecting after a failed first connect (the promise only says "Connection is closed").
      if (!o.worker || refused(last)) throw e;
      const wait = o.startWaitMs ?? WORKER_START_WAIT_MS;
      o.log?.(`redis ${where}: not answering; waiting up to ${Math.round(wait / 1000)} s for it`);
      await readyWithin(redis, wait, e);
    });
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    // "Connection is closed" hides the cause (a wrong password, a TLS port); the last error event has it.
    const why = last || (e instanceof Error ? e.message : String(e));
    // Redis answered and refused (a wrong password): the user's input, exit 2. No answer at all: exit 1.
    if (refused(why)) throw new DataError("--redis", `cannot use Redis at ${where}: ${why}`);
    throw new ServiceError(`--redis: cannot use Redis at ${where}: ${why}`);
  }
  return redis;
}

/** Redis answered and refused (a wrong password, an unknown command): waiting will not help. */
const refused = (why: string): boolean => /^(WRONGPASS|NOAUTH|ERR)\b/.test(why);

/** Resolves when the connection is ready; rejects after `ms` with `error`, or at once when Redis refuses us. */
function readyWithin(redis: Redis, ms: number, error: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (settle: () => void) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
      settle();
    };
    const onReady = () => done(resolve);
    const onError = (e: Error) => {
      if (refused(e.message)) done(() => reject(e));
    };
    const timer = setTimeout(() => done(() => reject(error)), ms);
    redis.on("ready", onReady);
    redis.on("error", onError);
  });
}
