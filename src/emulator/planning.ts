import type { DayName } from "../upstream/enums.ts";
import { DAY_MS, HOUR_MS } from "./durations.ts";
import type { CampaignRecord, LeadRecord } from "./store/model.ts";

/**
 * When each unsent schedule is due. Leads are sent in batches of
 * `daily_email_limit` per sending day, spread evenly over the daily window
 * (from_time..to_time, through midnight when to_time is the earlier time of
 * day; 09:00..17:00 when unset); days named in skip_days are
 * skipped; step n+1 of a lead follows step n after the step's
 * `next_message_days`. Times of day are read in UTC: the emulator does not
 * apply the campaign's time zone.
 */

const WEEKDAYS: readonly DayName[] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DEFAULT_FROM = "09:00:00";
const DEFAULT_TO = "17:00:00";
const MIN_WINDOW_MS = HOUR_MS;

function millisOfDay(time: string): number {
  const [hours = 0, minutes = 0, seconds = 0] = time.split(":").map(Number);
  return ((hours * 60 + minutes) * 60 + seconds) * 1000;
}

class SendingCalendar {
  private readonly sendingDays: number[] = [];
  private readonly skipped: Set<number>;
  readonly windowStart: number;
  readonly windowEnd: number;
  private readonly firstDay: number;

  constructor(
    private readonly start: number,
    skipDays: readonly DayName[],
    fromTime: string,
    toTime: string,
  ) {
    this.skipped = new Set(skipDays.map((day) => WEEKDAYS.indexOf(day)));
    if (this.skipped.size >= WEEKDAYS.length) this.skipped.clear();
    const from = millisOfDay(fromTime);
    const to = millisOfDay(toTime);
    // from_time opens the window and to_time closes it; one that closes earlier in the day than it opens runs
    // through midnight (22:00 to 02:00), as update campaign measures it. A day's window is the one it opens.
    this.windowStart = from;
    this.windowEnd = Math.max(to < from ? to + DAY_MS : to, from + MIN_WINDOW_MS);
    const today = Math.floor(start / DAY_MS) * DAY_MS;
    this.firstDay = start < today + this.windowEnd - MIN_WINDOW_MS / 4 ? today : today + DAY_MS;
  }

  private allowed(day: number): boolean {
    return !this.skipped.has(new Date(day).getUTCDay());
  }

  /** Midnight of the n-th sending day. */
  sendingDay(index: number): number {
    while (this.sendingDays.length <= index) {
      let day = this.sendingDays.at(-1) === undefined ? this.firstDay : (this.sendingDays.at(-1) as number) + DAY_MS;
      while (!this.allowed(day)) day += DAY_MS;
      this.sendingDays.push(day);
    }
    return this.sendingDays[index] as number;
  }

  /** The first allowed day at least `days` after `day`. */
  later(day: number, days: number): number {
    let result = day + days * DAY_MS;
    while (!this.allowed(result)) result += DAY_MS;
    return result;
  }

  /** The time of one slot out of `slots` on a day; on the first day the window opens no earlier than the start. */
  slot(day: number, slot: number, slots: number): number {
    const opens = day === this.firstDay ? Math.max(day + this.windowStart, this.start) : day + this.windowStart;
    const closes = day + this.windowEnd;
    return opens + Math.floor((slot * Math.max(closes - opens, MIN_WINDOW_MS / 4)) / slots);
  }
}

/** Plans the unsent schedules of `leads` (a batch of one campaign) as if sending began at `start`. */
export function planSchedules(campaign: CampaignRecord, leads: readonly LeadRecord[], start: number): void {
  const settings = campaign.settings;
  const perDay = Math.max(1, Math.min(settings.daily_email_limit, 10_000));
  const calendar = new SendingCalendar(start, settings.skip_days, settings.from_time ?? DEFAULT_FROM, settings.to_time ?? DEFAULT_TO);
  leads.forEach((lead, position) => {
    const slot = position % perDay;
    let day = calendar.sendingDay(Math.floor(position / perDay));
    lead.schedules.forEach((schedule, step) => {
      if (step > 0) day = calendar.later(day, lead.schedules[step - 1]?.sequence.nextMessageDays ?? 0);
      if (schedule.status !== "created") return;
      // A few milliseconds of jitter so that times carry real millisecond precision.
      schedule.at = calendar.slot(day, slot, perDay) + (lead.id % 997);
    });
  });
  campaign.sendQueue = null;
}
