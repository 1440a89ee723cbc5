import type { Queue } from "bullmq";
import type { Kysely } from "kysely";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "../logger.ts";
import type { SyncObserver } from "../sync/context.ts";
import { achievedCadences, campaignLag, eventLag } from "../sync/status.ts";
import { lastVerification } from "../sync/verifications.ts";
import type { ClientHooks } from "../upstream/hooks.ts";
import type { Database } from "../warehouse/database.ts";
import { withDeadline } from "./deadline.ts";

/**
 * The worker's Prometheus metrics. Counters are fed by the upstream client's
 * hooks, the engine's observer and the workers' job events; queue depths and
 * checkpoint lag are read from Redis and the warehouse when Prometheus
 * scrapes, so they are never stale and cost nothing between scrapes.
 */

/** The status label of an upstream attempt that got no response (a timeout, a dropped connection). */
const NO_RESPONSE = "none";

/**
 * How long a scrape waits for each read of Redis or the warehouse: a gauge that could not be read in time is left
 * empty (and said so in the log), so /metrics still answers within a scrape's timeout (Prometheus: 10 s) while
 * Redis or PostgreSQL is away, and the process's own metrics stay visible through the outage.
 */
const READ_TIMEOUT_MS = 3_000;

/** `paused`: BullMQ keeps the waiting jobs of a paused queue (Bull Board's pause) in a list of their own. */
const JOB_STATES = ["waiting", "paused", "active", "delayed", "prioritized", "waiting-children", "completed", "failed"] as const;

export interface CheckpointSource {
  db: Kysely<Database>;
  account: string;
}

export interface WorkerMetrics {
  readonly registry: Registry;
  readonly clientHooks: ClientHooks;
  readonly syncObserver: SyncObserver;
  observeJob(queue: string, status: "completed" | "failed", durationMs: number): void;
  /** Queues whose job counts are reported on each scrape. */
  watchQueues(queues: readonly Queue[]): void;
  /** Where checkpoint lag is read on each scrape. */
  watchCheckpoints(source: CheckpointSource): void;
}

export const METRIC_NAMES = {
  upstreamRequests: "coldsync_upstream_requests_total",
  upstreamDuration: "coldsync_upstream_request_duration_seconds",
  upstreamRetries: "coldsync_upstream_retries_total",
  rejectedRecords: "coldsync_rejected_records_total",
  fieldIssues: "coldsync_field_issues_total",
  rowsUpserted: "coldsync_rows_upserted_total",
  streamDuration: "coldsync_stream_duration_seconds",
  jobDuration: "coldsync_job_duration_seconds",
  queueJobs: "coldsync_queue_jobs",
  checkpointLag: "coldsync_checkpoint_lag_seconds",
  achievedCadence: "coldsync_rhythm_cadence_seconds",
  eventLag: "coldsync_event_lag_seconds",
  verifyProblems: "coldsync_verify_problems",
  verifyFinished: "coldsync_verify_last_finished_timestamp_seconds",
} as const;

/**
 * How many `field` labels coldsync_field_issues_total takes under one field of a record (`table.field`), and in all,
 * before it counts the rest as `<table.field>.(other)` and `(other)`. A field's path names the keys of what it sits
 * in, and inside a field the spec does not know (read whole into `_extra`) those are the upstream's data (a lead's
 * custom fields, keyed by a customer's CSV columns): prom-client keeps every label set for the life of the process,
 * and each would be a series of every scrape for months. Bounded per field, such a field cannot take the labels of
 * the fields the spec knows.
 */
const FIELD_LABELS_PER_FIELD = 50;
const FIELD_LABELS = 1_000;

/** The `field` labels taken so far, per record field and in all. */
class FieldLabels {
  readonly #seen = new Set<string>();
  readonly #perField = new Map<string, number>();

  of(stream: string, field: string): string {
    const key = `${stream}\u0000${field}`;
    if (this.#seen.has(key)) return field;
    const recordField = field.split(".", 2).join(".");
    const taken = this.#perField.get(recordField) ?? 0;
    if (taken >= FIELD_LABELS_PER_FIELD) return `${recordField}.(other)`;
    if (this.#seen.size >= FIELD_LABELS) return "(other)";
    this.#seen.add(key);
    this.#perField.set(recordField, taken + 1);
    return field;
  }
}

export function createMetrics(logger?: Logger): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "coldsync_" });
  let queues: readonly Queue[] = [];
  let checkpoints: CheckpointSource | undefined;

  const requests = new Counter({
    name: METRIC_NAMES.upstreamRequests,
    help: "Upstream HTTP attempts, every one counted, by endpoint, method and status (none: no response).",
    labelNames: ["endpoint", "method", "status"],
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: METRIC_NAMES.upstreamDuration,
    help: "Upstream response time per attempt.",
    labelNames: ["endpoint", "method"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const retries = new Counter({
    name: METRIC_NAMES.upstreamRetries,
    help: "Upstream retries scheduled, by endpoint and the status that caused them (none: no response).",
    labelNames: ["endpoint", "method", "status"],
    registers: [registry],
  });
  const rejected = new Counter({
    name: METRIC_NAMES.rejectedRecords,
    help: "Upstream records (or parts of records) that could not be placed and went to rejected_records, by stream.",
    labelNames: ["stream"],
    registers: [registry],
  });
  const fieldLabels = new FieldLabels();
  const fieldIssues = new Counter({
    name: METRIC_NAMES.fieldIssues,
    help: "Fields that deviated from the spec and were stored as NULL or coerced, by stream and table.field.",
    labelNames: ["stream", "field"],
    registers: [registry],
  });
  const rows = new Counter({
    name: METRIC_NAMES.rowsUpserted,
    help: "Warehouse rows inserted or changed by the sync, by table.",
    labelNames: ["table"],
    registers: [registry],
  });
  const streamDuration = new Histogram({
    name: METRIC_NAMES.streamDuration,
    help: "Time to walk one stream of one scope.",
    labelNames: ["stream", "ok"],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: METRIC_NAMES.jobDuration,
    help: "Time a job spent in its processor, by queue and how it ended.",
    labelNames: ["queue", "status"],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });

  new Gauge({
    name: METRIC_NAMES.queueJobs,
    help: "Jobs per queue and state, read from Redis on scrape.",
    labelNames: ["queue", "state"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const depths = await withDeadline(Promise.all(queues.map((queue) => queue.getJobCounts(...JOB_STATES))), READ_TIMEOUT_MS);
        for (const [index, queue] of queues.entries()) {
          for (const state of JOB_STATES) this.set({ queue: queue.name, state }, depths[index]?.[state] ?? 0);
        }
      } catch (error) {
        logger?.warn({ err: error }, "could not read queue depths for /metrics");
      }
    },
  });

  /**
   * A gauge read from the warehouse on each scrape; a failed read leaves it empty and says what it could not read.
   * Its values replace the last ones at once, after the read: scrapes that overlap (two Prometheus servers) each
   * read their own, where resetting before the read let both add to one gauge.
   */
  const warehouseGauge = <Label extends string>(
    options: { name: string; help: string; labelNames?: readonly Label[]; what: string },
    read: (source: CheckpointSource) => Promise<readonly GaugeValue<Label>[]>,
  ) =>
    new Gauge<Label>({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames ?? [],
      registers: [registry],
      async collect() {
        let values: readonly GaugeValue<Label>[] = [];
        try {
          if (checkpoints) values = await withDeadline(read(checkpoints), READ_TIMEOUT_MS);
        } catch (error) {
          logger?.warn({ err: error }, `could not read ${options.what} for /metrics`);
        }
        this.reset();
        for (const [labels, value] of values) this.set(labels, value);
      },
    });

  warehouseGauge(
    {
      name: METRIC_NAMES.checkpointLag,
      help: "Seconds since the stalest stream of each campaign that runs every cycle last finished a complete scan (since the campaign was first seen while one never did).",
      labelNames: ["campaign_uid"],
      what: "checkpoint lag",
    },
    async ({ db, account }) => [...(await campaignLag(db, account))].map(([campaign_uid, lag]) => [{ campaign_uid }, lag.behindSeconds]),
  );

  warehouseGauge(
    {
      name: METRIC_NAMES.achievedCadence,
      help: "Seconds between a campaign rhythm's last two complete cycles (leads: detail, walk, sequences; events: replies, clicks, opens).",
      labelNames: ["campaign_uid", "rhythm"],
      what: "achieved cadences",
    },
    async ({ db, account }) => (await achievedCadences(db, account)).map((row) => [{ campaign_uid: row.campaign_uid, rhythm: row.rhythm }, row.seconds]),
  );

  warehouseGauge(
    {
      name: METRIC_NAMES.eventLag,
      help: "Seconds from an event's own time to the warehouse holding it, over events of the last 24 hours, by stream and quantile.",
      labelNames: ["stream", "quantile"],
      what: "event lag",
    },
    async ({ db, account }) =>
      (await eventLag(db, account)).flatMap((row) => [
        ...(row.p50 === null ? [] : [[{ stream: row.stream, quantile: "0.5" }, row.p50] as const]),
        ...(row.p95 === null ? [] : [[{ stream: row.stream, quantile: "0.95" }, row.p95] as const]),
      ]),
  );

  // Both verification gauges show the same row: one read per scrape serves them.
  const lastVerificationOfScrape = sharedWhileRunning((source: CheckpointSource) => lastVerification(source.db, source.account));

  warehouseGauge(
    {
      name: METRIC_NAMES.verifyProblems,
      help: "Checks of the last verification of the whole account that were not ok, by stream and check (missing, extra, rejected, unknown, differs), read from the warehouse on scrape.",
      labelNames: ["stream", "check"],
      what: "the last verification",
    },
    async (source) => {
      const last = await lastVerificationOfScrape(source);
      const counts = new Map<string, [{ stream: string; check: string }, number]>();
      for (const line of last?.problems ?? []) {
        const key = `${line.stream}\u0000${line.status}`;
        const counted = counts.get(key) ?? [{ stream: line.stream, check: line.status }, 0];
        counts.set(key, [counted[0], counted[1] + 1]);
      }
      return [...counts.values()];
    },
  );

  warehouseGauge(
    { name: METRIC_NAMES.verifyFinished, help: "When the last verification finished (Unix seconds); absent when none ran.", what: "the last verification" },
    async (source) => {
      const last = await lastVerificationOfScrape(source);
      return last ? [[{}, last.finishedAt.getTime() / 1000]] : [];
    },
  );

  return {
    registry,
    clientHooks: {
      onResponse: ({ endpoint, method, status, durationMs }) => {
        requests.inc({ endpoint, method, status: String(status) });
        requestDuration.observe({ endpoint, method }, durationMs / 1000);
      },
      // Response time is a response's: an attempt that got none is counted, not timed.
      onNoAnswer: ({ endpoint, method }) => requests.inc({ endpoint, method, status: NO_RESPONSE }),
      onRetry: ({ endpoint, method, status }) => retries.inc({ endpoint, method, status: status === undefined ? NO_RESPONSE : String(status) }),
    },
    syncObserver: {
      onRowsWritten: (table, count) => rows.inc({ table }, count),
      onRejected: (stream) => rejected.inc({ stream }),
      onFieldIssues: (stream, field, count) => fieldIssues.inc({ stream, field: fieldLabels.of(stream, field) }, count),
      onStreamFinished: ({ stream, durationMs, ok }) => streamDuration.observe({ stream, ok: String(ok) }, durationMs / 1000),
    },
    observeJob: (queue, status, durationMs) => jobDuration.observe({ queue, status }, durationMs / 1000),
    watchQueues: (watched) => {
      queues = watched;
    },
    watchCheckpoints: (source) => {
      checkpoints = source;
    },
  };
}

/** A gauge's value and its labels. */
type GaugeValue<Label extends string> = readonly [Partial<Record<Label, string>>, number];

/**
 * A read shared by the callers that arrive while it runs. The registry
 * collects every metric of a scrape at once, so the gauges of one scrape read
 * it once, and the next scrape reads it anew.
 */
function sharedWhileRunning<A, T>(read: (argument: A) => Promise<T>): (argument: A) => Promise<T> {
  let running: Promise<T> | undefined;
  return (argument) => {
    running ??= read(argument).finally(() => {
      running = undefined;
    });
    return running;
  };
}
