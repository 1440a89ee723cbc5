import { beforeAll, describe, expect, it } from "vitest";
import type { GroundTruth, TruthEntity } from "../../src/emulator/options.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, snapshotAccount, truthKeysOf, useEmulator, type Answer, type Query } from "../support/emulator.ts";
import { instantMicros } from "./instants.ts";

/**
 * The faults only `hostile` injects on paginated listings: a record the client already paged past is
 * deleted upstream (delete), a page comes back empty although records remain (empty-page), and two
 * events of one schedule arrive within one millisecond (sub-millisecond). Through all of them the
 * ground truth stays exactly what the API serves.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 31 });
let api: Api;

interface Target {
  path: string;
  query: Query;
  entity: TruthEntity;
}

interface Seen {
  requests: number;
  emptyPages: { total: number; retried: Answer }[];
}

const seen: Seen = { requests: 0, emptyPages: [] };
let truthBefore: GroundTruth;
let truthAfter: GroundTruth;

async function targetsOf(): Promise<Target[]> {
  const { records } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  const targets: Target[] = [
    { path: PATHS.campaigns, query: {}, entity: "campaigns" },
    { path: PATHS.domains, query: {}, entity: "domains" },
    { path: PATHS.contacts, query: {}, entity: "contact_lists" },
  ];
  for (const campaign of records.filter((record) => ["running", "complete", "paused"].includes(record.status))) {
    const byUid = { campaign_uid: campaign.uid };
    targets.push(
      { path: PATHS.leads, query: byUid, entity: "leads" },
      { path: PATHS.linkClickEvents, query: byUid, entity: "link_clicks" },
      { path: PATHS.emailOpenEvents, query: byUid, entity: "email_opens" },
    );
  }
  return targets;
}

async function getQuietly(path: string, query: Query): Promise<Answer | undefined> {
  seen.requests += 1;
  return api.get(path, query).catch(() => undefined);
}

const DELETING = ["campaigns", "contact_lists", "domains", "email_opens", "leads", "link_clicks"] as const;
const BUDGET = 4_000;
const SIX_DIGITS = /\.\d{6}Z$/;

/** Entities that lost a record the account held before the faults began. */
function deletedEntities(truth: GroundTruth): TruthEntity[] {
  return DELETING.filter((entity) => {
    const now = new Set(truth.keys[entity]);
    return truthBefore.keys[entity].some((key) => !now.has(key));
  });
}

function allSeen(truth: GroundTruth): boolean {
  const precise = (entity: "email_opens" | "link_clicks") => truth.keys[entity].some((key) => SIX_DIGITS.test(key));
  return deletedEntities(truth).length === DELETING.length && seen.emptyPages.length > 0 && precise("email_opens") && precise("link_clicks");
}

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  const targets = await targetsOf();
  truthBefore = emulator().truth("a");
  // The account-wide listings are few; ask them as often as all campaign listings together.
  const accountWide = targets.filter((target) => !("campaign_uid" in target.query));
  const rotation = [...targets, ...Array.from({ length: Math.ceil(targets.length / accountWide.length) }, () => accountWide).flat()];
  const settings = emulator().settings;
  Object.assign(settings, { faults: "hostile", slowMs: 1 });
  try {
    for (let step = 0; seen.requests < BUDGET && (step % 50 !== 0 || !allSeen(emulator().truth("a"))); step++) {
      const target = rotation[step % rotation.length] as Target;
      const query = { ...target.query, limit: 3, offset: 3 };
      const answer = await getQuietly(target.path, query);
      const page = answer?.status === 200 ? resources.pageEnvelope.safeParse(answer.json) : undefined;
      if (page?.success && page.data.data.length === 0 && page.data.total > 3) {
        // A transient glitch: the same request, asked again until it is not a 5xx or 429, answers normally.
        let retried: Answer | undefined;
        for (let attempt = 0; attempt < 10 && retried?.status !== 200; attempt++) retried = await getQuietly(target.path, query);
        if (retried) seen.emptyPages.push({ total: page.data.total, retried });
      }
    }
  } finally {
    settings.faults = "none";
  }
  truthAfter = emulator().truth("a");
}, 120_000);

describe("delete", () => {
  it("deletes records of every kind of listing, and the ground truth loses them", () => {
    expect(deletedEntities(truthAfter), `after ${seen.requests} requests`).toEqual([...DELETING]);
  });

  it("leaves the API and the ground truth in agreement, key by key (a deleted lead's schedules and events went with it)", async () => {
    const snapshot = await snapshotAccount(api);
    expect(truthKeysOf(snapshot)).toEqual(truthAfter.keys);
  });
});

describe("empty-page", () => {
  it("answers an empty page with the real total, and the same request asked again answers normally", () => {
    expect(seen.emptyPages.length, `after ${seen.requests} requests`).toBeGreaterThan(0);
    for (const { retried, total } of seen.emptyPages) {
      expect(retried.status).toBe(200);
      const page = resources.pageEnvelope.parse(retried.json);
      expect(page.data.length).toBeGreaterThan(0);
      expect(Math.abs(page.total - total)).toBeLessThanOrEqual(3);
    }
  });
});

describe("sub-millisecond", () => {
  it("creates opens and clicks rendered with six fraction digits, paired within one millisecond on one schedule", () => {
    for (const entity of ["email_opens", "link_clicks"] as const) {
      const precise = truthAfter.keys[entity].filter((key) => SIX_DIGITS.test(key));
      expect(precise.length, entity).toBeGreaterThanOrEqual(2);
      for (const key of precise) {
        const parts = key.split("|");
        const time = parts.at(-1) as string;
        const sameMillisecond = truthAfter.keys[entity].filter((other) => {
          const otherParts = other.split("|");
          return other !== key && otherParts[0] === parts[0] && Math.floor(instantMicros(otherParts.at(-1) as string) / 1000) === Math.floor(instantMicros(time) / 1000);
        });
        expect(sameMillisecond.length, key).toBeGreaterThan(0);
      }
    }
  });

  it("serves them exactly as the truth writes them, and counts them in the schedule like any open or click", async () => {
    const snapshot = await snapshotAccount(api);
    const opens = snapshot.campaigns.flatMap((data) => data.opens);
    const clicks = snapshot.campaigns.flatMap((data) => data.clicks);
    const preciseOpens = opens.filter((open) => SIX_DIGITS.test(open.opened_on));
    const preciseClicks = clicks.filter((click) => SIX_DIGITS.test(click.clicked_on));
    expect(preciseOpens.length).toBeGreaterThan(0);
    expect(preciseClicks.length).toBeGreaterThan(0);
    for (const open of preciseOpens) expect(truthAfter.keys.email_opens).toContain(`${open.schedule_id}|${open.opened_on}`);
    for (const click of preciseClicks) expect(truthAfter.keys.link_clicks).toContain(`${click.schedule_id}|${click.link}|${click.clicked_on}`);
    const schedules = new Map(snapshot.campaigns.flatMap((data) => data.leads.flatMap((lead) => lead.schedules)).map((schedule) => [schedule.id, schedule]));
    for (const open of preciseOpens) {
      const schedule = schedules.get(open.schedule_id);
      expect(schedule?.email_open_count).toBe(opens.filter((other) => other.schedule_id === open.schedule_id).length);
      const first = Math.min(...opens.filter((other) => other.schedule_id === open.schedule_id).map((other) => instantMicros(other.opened_on)));
      expect(instantMicros(schedule?.email_opened_on as string)).toBe(first);
    }
    for (const click of preciseClicks) {
      const nested = schedules.get(click.schedule_id)?.link_click_events.map((event) => `${event.link}|${event.clicked_on}`);
      expect(nested).toContain(`${click.link}|${click.clicked_on}`);
    }
  });
});
