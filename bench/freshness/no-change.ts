import { setTimeout as sleep } from "node:timers/promises";
import { eventsSchedulerId } from "../../src/queue/schedulers.ts";
import { difference, type RequestCounts } from "./requests.ts";
import { liveStartedCampaignCount } from "./upstream.ts";
import { eventsReadSince, eventsRuns, type RunTally } from "./warehouse.ts";
import type { BenchWorker } from "./workers.ts";

/**
 * The requests of events cycles in which nothing changed, against the README
 * formula (an events cycle of a started campaign is 3 requests; per minute,
 * 3 × the started campaigns that can still send, at COLDSYNC_EVENTS_EVERY=1m).
 *
 * With the simulated clock frozen, the worker first reads what happened
 * before the freeze (every live campaign gets an events run that started after
 * it). Then the window runs from a quiet moment (no events job waiting or
 * running) to the quiet moment after exactly `ticks` further ticks of the
 * events scheduler, so it holds whole cycles: the formula for that window is
 * 3 × campaigns × ticks. Only the events rhythm's endpoints are compared; the
 * leads and discovery requests of the window are reported beside them.
 */

export interface NoChangeResult {
  ticks: number;
  campaigns: number;
  expected: number;
  measured: RequestCounts;
  runs: RunTally;
  windowMs: number;
  catchUpMs: number;
}

async function quiet(worker: BenchWorker): Promise<boolean> {
  const counts = await worker.queues.campaignEvents.getJobCounts("waiting", "active", "prioritized");
  return Object.values(counts).every((count) => count === 0);
}

async function nextTick(worker: BenchWorker): Promise<number> {
  const scheduler = await worker.queues.campaignEvents.getJobScheduler(eventsSchedulerId(worker.account));
  if (scheduler?.next === undefined) throw new Error(`the ${worker.name} worker has no events scheduler`);
  return scheduler.next;
}

async function until(condition: () => Promise<boolean>, deadline: number, what: string): Promise<void> {
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

export async function measureNoChange(
  worker: BenchWorker,
  upstream: { url: string; apiKey: string },
  frozenAtMs: number,
  ticks: number,
  log: (line: string) => void,
): Promise<NoChangeResult> {
  const everyMs = worker.config.worker.eventsEveryMs;
  if (everyMs === undefined) throw new Error("the no-change measurement needs a worker with an events rhythm");
  const { db } = worker.warehouse;
  const deadline = Date.now() + (4 + ticks * 2) * everyMs + 120_000;

  await until(async () => (await eventsReadSince(db, worker.account, frozenAtMs)) && (await quiet(worker)), deadline, "every live campaign's events to be read after the freeze");
  const catchUpMs = Date.now() - frozenAtMs;
  log(`no-change: caught up ${(catchUpMs / 1000).toFixed(0)} s after the freeze`);

  // The window opens at a quiet moment not about to be ended by a tick (the scrape takes well under a second).
  let firstTick = 0;
  let before: RequestCounts | undefined;
  let openedAt = 0;
  while (before === undefined) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a quiet moment to open the no-change window");
    firstTick = await nextTick(worker);
    if (firstTick - Date.now() > 3_000 && (await quiet(worker))) {
      openedAt = Date.now();
      const counts = await worker.requests();
      if ((await nextTick(worker)) === firstTick && (await quiet(worker))) before = counts;
    }
    if (before === undefined) await sleep(500);
  }

  // It closes at the quiet moment after the last tick's jobs, before the tick after it.
  const lastTick = firstTick + (ticks - 1) * everyMs;
  const tickAfter = lastTick + everyMs;
  await sleep(Math.max(0, lastTick - Date.now()) + 1_000);
  let scheduled = 0;
  const lastTickDone = async () => (scheduled = await nextTick(worker)) >= tickAfter && (await quiet(worker));
  await until(lastTickDone, tickAfter, `the jobs of the events tick at ${new Date(lastTick).toISOString()} to finish`);
  const after = await worker.requests();
  const closedAt = Date.now();
  if ((await nextTick(worker)) !== scheduled || !(await quiet(worker))) throw new Error("the next events tick began before the no-change window could close");

  const campaigns = await liveStartedCampaignCount(upstream.url, upstream.apiKey);
  return {
    ticks,
    campaigns,
    expected: 3 * campaigns * ticks,
    measured: difference(before, after),
    runs: await eventsRuns(db, worker.account, openedAt, closedAt),
    windowMs: closedAt - openedAt,
    catchUpMs,
  };
}
