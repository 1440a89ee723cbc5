import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES } from "../../src/http/metrics.ts";
import { fleetStatus } from "../../src/http/status-page/fleet.ts";
import { openQueues, type Queues } from "../../src/queue/queues.ts";
import { useTestRedis } from "../support/redis.ts";

/**
 * A queue paused from Bull Board holds its waiting jobs in BullMQ's `paused` list, and jobs added while paused go
 * there too: the queue depths /metrics and the status page show count them.
 */

const testRedis = useTestRedis("paused_queue");
let redis: Redis;
let queues: Queues;

beforeAll(() => {
  redis = new Redis(testRedis.url, { maxRetriesPerRequest: null });
  queues = openQueues(redis, { prefix: testRedis.prefix });
});

afterAll(async () => {
  await queues.close();
  redis.disconnect();
});

describe("queue depth of a paused queue", () => {
  it("still counts the jobs the paused queue holds, in /metrics and on the status page", async () => {
    const events = queues.campaignEvents;
    await events.addBulk(["c-1", "c-2", "c-3"].map((campaignUid) => ({ name: "sync-events", data: { account: "acme", campaignUid } })));
    await events.pause();
    expect(await events.getWaitingCount()).toBe(3); // BullMQ itself still says three jobs wait

    const metrics = createMetrics();
    metrics.watchQueues([events]);
    const gauge = await metrics.registry.getSingleMetric(METRIC_NAMES.queueJobs)?.get();
    const paused = gauge?.values.find((value) => value.labels.queue === "campaign-events" && value.labels.state === "paused")?.value;

    const fleet = await fleetStatus({ redis, queues: [events], prefix: testRedis.prefix, account: "acme", boardPath: "/admin/queues" }, []);
    const depth = fleet.queues.find((queue) => queue.name === "campaign-events");

    expect({ metric: paused, statusPage: { waiting: depth?.waiting, paused: depth?.paused } }).toEqual({ metric: 3, statusPage: { waiting: 3, paused: true } });
  });
});
