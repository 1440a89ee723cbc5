import type { DayName } from "../upstream/enums.ts";
import { DAY_MS, HOUR_MS } from "./durations.ts";
import type { CampaignRecord, LeadRecord } from "./store/model.ts";

/**
 * When each unsent schedule is due. A campaign sends at most
 * `daily_email_limit` emails per sending day (spec 2.3: "maximum emails per
 * day"), first steps, follow-ups and the emails of leads that joined later
 * alike: each unsent schedule takes the earliest day it may go out on that
 * still has room, and the emails of a day are spread evenly over the daily window
 * (from_time..to_time, through midnight when to_time is the earlier time of
 * day; 09:00..17:00 when unset); days named in skip_days are
 * skipped; step n+1 of a lead follows step n after the step's
 * `next_message_days`. The window and the days are read in the campaign's
 * `time_zone` (spec 2.3), in UTC when it is null or names no zone the runtime
 * knows.
 *
 * Days are counted on the zone's wall clock: a day is its local midnight
 * written as if it were UTC, so its weekday is `getUTCDay` and the next day is
 * DAY_MS later whatever the offset does; a slot's wall-clock time is turned
 * into an instant only at the end.
 */

const WEEKDAYS: readonly DayName[] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DEFAULT_FROM = "09:00:00";
const DEFAULT_TO = "17:00:00";
const MIN_WINDOW_MS = HOUR_MS;

function millisOfDay(time: string): number {
  const [hours = 0, minutes = 0, seconds = 0] = time.split(":").map(Number);
  return ((hours * 60 + minutes) * 60 + seconds) * 1000;
}

const QUARTER_HOUR_MS = HOUR_MS / 4;
/** Offsets kept at most: a wall-clock run plans further every day, and would otherwise keep every quarter hour it planned. */
const MAX_CACHED_OFFSETS = 200_000;
const WALL_CLOCK_FORMATS = new Map<string, Intl.DateTimeFormat | undefined>();

function wallClockFormat(zone: string | null): Intl.DateTimeFormat | undefined {
  if (zone === null || zone === "" || zone === "UTC") return undefined;
  if (!WALL_CLOCK_FORMATS.has(zone)) {
    let format: Intl.DateTimeFormat | undefined;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch {
      format = undefined;
    }
    WALL_CLOCK_FORMATS.set(zone, format);
  }
  return WALL_CLOCK_FORMATS.get(zone);
}

/**
 * A time zone's offset from UTC, through Intl (no tz files are read: slim
 * container images lack them). Offsets are looked up once per quarter hour:
 * clock changes fall on one in nearly every zone, and one that does not
 * (Gaza's 00:01) only moves the times planned in the minutes after it.
 */
class ZoneClock {
  /** Offsets by zone and quarter hour, shared by every plan (a plan spans weeks, a few thousand quarters); emptied past MAX_CACHED. */
  private static readonly OFFSETS = new Map<string, Map<number, number>>();
  private readonly format: Intl.DateTimeFormat | undefined;
  private readonly offsets: Map<number, number>;

  constructor(zone: string | null) {
    this.format = wallClockFormat(zone);
    const key = this.format === undefined ? "" : (zone as string);
    if (ZoneClock.OFFSETS.size > 0 && [...ZoneClock.OFFSETS.values()].reduce((sum, held) => sum + held.size, 0) > MAX_CACHED_OFFSETS) ZoneClock.OFFSETS.clear();
    let offsets = ZoneClock.OFFSETS.get(key);
    if (offsets === undefined) ZoneClock.OFFSETS.set(key, (offsets = new Map()));
    this.offsets = offsets;
  }

  private offsetAt(instant: number): number {
    if (this.format === undefined) return 0;
    const quarter = Math.floor(instant / QUARTER_HOUR_MS);
    let offset = this.offsets.get(quarter);
    if (offset === undefined) {
      const at = quarter * QUARTER_HOUR_MS;
      const part = Object.fromEntries(this.format.formatToParts(at).map((item) => [item.type, Number(item.value)]));
      const wall = Date.UTC(part.year ?? 1970, (part.month ?? 1) - 1, part.day ?? 1, part.hour ?? 0, part.minute ?? 0, part.second ?? 0);
      offset = wall - at;
      this.offsets.set(quarter, offset);
    }
    return offset;
  }

  /** The zone's wall-clock time at `instant`, written as if it were UTC. */
  wall(instant: number): number {
    return instant + this.offsetAt(instant);
  }

  /**
   * The instant a wall-clock time names; one a clock change skips (02:30 on a spring-forward night) moves
   * forward by the change (03:30), east or west of UTC; one a change repeats (fall-back) is one of its two.
   */
  instant(wall: number): number {
    const first = this.offsetAt(wall - this.offsetAt(wall));
    const second = this.offsetAt(wall - first);
    if (this.wall(wall - second) === wall) return wall - second;
    // Skipped: neither offset maps back. The later instant is the one read with the offset before the change.
    return wall - Math.min(first, second);
  }
}

class SendingCalendar {
  private readonly skipped: Set<number>;
  readonly windowStart: number;
  readonly windowEnd: number;
  private readonly firstDay: number;

  /** When sending begins, on the zone's wall clock. */
  private readonly start: number;

  constructor(
    private readonly clock: ZoneClock,
    start: number,
    skipDays: readonly DayName[],
    fromTime: string,
    toTime: string,
  ) {
    this.start = clock.wall(start);
    this.skipped = new Set(skipDays.map((day) => WEEKDAYS.indexOf(day)));
    if (this.skipped.size >= WEEKDAYS.length) this.skipped.clear();
    const from = millisOfDay(fromTime);
    const to = millisOfDay(toTime);
    // from_time opens the window and to_time closes it; one that closes earlier in the day than it opens runs
    // through midnight (22:00 to 02:00), as update campaign measures it. A day's window is the one it opens.
    this.windowStart = from;
    this.windowEnd = Math.max(to < from ? to + DAY_MS : to, from + MIN_WINDOW_MS);
    const today = Math.floor(this.start / DAY_MS) * DAY_MS;
    this.firstDay = this.start < today + this.windowEnd - MIN_WINDOW_MS / 4 ? today : today + DAY_MS;
  }

  private allowed(day: number): boolean {
    return !this.skipped.has(new Date(day).getUTCDay());
  }

  /** The first allowed day at least `days` after `day`. */
  later(day: number, days: number): number {
    let result = day + days * DAY_MS;
    while (!this.allowed(result)) result += DAY_MS;
    return result;
  }

  /** The first allowed day that `hasRoom`, at or after `from` (a day) and not before sending begins. */
  firstWithRoom(hasRoom: (day: number) => boolean, from = this.firstDay): number {
    let result = Math.max(from, this.firstDay);
    while (!this.allowed(result) || !hasRoom(result)) result += DAY_MS;
    return result;
  }

  /** The sending day whose window an instant falls in (a window through midnight is the day it opens). */
  dayOf(instant: number): number {
    return Math.floor((this.clock.wall(instant) - this.windowStart) / DAY_MS) * DAY_MS;
  }

  /** The instant of one slot out of `slots` on a day; on the first day the window opens no earlier than the start. */
  slot(day: number, slot: number, slots: number): number {
    const opens = day === this.firstDay ? Math.max(day + this.windowStart, this.start) : day + this.windowStart;
    const closes = day + this.windowEnd;
    return this.clock.instant(opens + Math.floor((slot * Math.max(closes - opens, MIN_WINDOW_MS / 4)) / slots));
  }
}

/**
 * Plans the unsent schedules of `leads` (a batch of one campaign) as if sending began at `start`, around the emails
 * the campaign already sent or planned for its other leads: no day holds more than `daily_email_limit`.
 */
export function planSchedules(campaign: CampaignRecord, leads: readonly LeadRecord[], start: number): void {
  const settings = campaign.settings;
  const perDay = Math.max(1, Math.min(settings.daily_email_limit, 10_000));
  const calendar = new SendingCalendar(new ZoneClock(settings.time_zone), start, settings.skip_days, settings.from_time ?? DEFAULT_FROM, settings.to_time ?? DEFAULT_TO);
  const load = emailsPerDay(campaign, new Set(leads), calendar);
  const hasRoom = (day: number) => (load.get(day) ?? 0) < perDay;
  // Days before it are full for first steps: each lead's search starts there.
  let firstOpen = calendar.firstWithRoom(hasRoom);
  for (const lead of leads) {
    let day: number | undefined;
    lead.schedules.forEach((schedule, step) => {
      const previous = lead.schedules[step - 1];
      day = day === undefined || previous === undefined ? firstOpen : calendar.later(day, previous.sequence.nextMessageDays);
      if (schedule.status === "sent" && schedule.sentOn !== null) day = calendar.dayOf(schedule.sentOn);
      if (schedule.status !== "created") return;
      day = calendar.firstWithRoom(hasRoom, day);
      if (step === 0) firstOpen = day;
      const taken = load.get(day) ?? 0;
      load.set(day, taken + 1);
      // A few milliseconds of jitter so that times carry real millisecond precision.
      schedule.at = calendar.slot(day, taken, perDay) + (lead.id % 997);
    });
  }
  campaign.sendQueue = null;
}

/** The campaign's emails per sending day: those sent, and those planned for leads other than `replanned`. */
function emailsPerDay(campaign: CampaignRecord, replanned: ReadonlySet<LeadRecord>, calendar: SendingCalendar): Map<number, number> {
  const load = new Map<number, number>();
  for (const lead of campaign.leads.items) {
    for (const schedule of lead.schedules) {
      const at = schedule.status === "sent" ? schedule.sentOn : schedule.status === "created" && !replanned.has(lead) ? schedule.at : null;
      if (at === null) continue;
      const day = calendar.dayOf(at);
      load.set(day, (load.get(day) ?? 0) + 1);
    }
  }
  return load;
}
