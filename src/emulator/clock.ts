import type { Logger } from "../logger.ts";
import type { RuntimeSettings } from "./options.ts";
import { advance } from "./simulate.ts";
import type { World } from "./store/world.ts";

/**
 * The wall-clock mode of the simulated clock (setting `clock: "wall"`). In
 * the default `manual` mode simulated time moves only with advance(); in
 * `wall` mode it also follows real time, at real speed, from the moment the
 * mode is switched on (or the emulator starts in it): the real time elapsed
 * since the last catch-up is played with advance(), lazily before each request
 * is answered and on a timer every TICK_MS, so sends, opens, clicks, replies and
 * new leads keep arriving on their seeded schedule while a client runs.
 * The simulated now keeps its own date (it starts at 2026-06-01T00:00:00Z);
 * only the elapsed time is real. Switching back to `manual` stops it where it is.
 */

const TICK_MS = 1_000;

export class WallClock {
  /** The real time up to which simulated time has caught up; undefined while the mode is manual. */
  private anchor: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly world: World,
    private readonly settings: RuntimeSettings,
    private readonly logger?: Logger,
    private readonly realNow: () => number = Date.now,
  ) {
    this.catchUp();
    this.timer = setInterval(() => this.catchUp(), TICK_MS);
    this.timer.unref();
  }

  /** Plays the real time elapsed since the last call (wall mode only); cheap when none has. */
  catchUp(): void {
    if (this.settings.clock !== "wall") {
      this.anchor = undefined;
      return;
    }
    const now = this.realNow();
    if (this.anchor === undefined || now < this.anchor) {
      this.anchor = now;
      return;
    }
    const elapsed = now - this.anchor;
    if (elapsed < 1) return;
    this.anchor = now;
    try {
      advance(this.world, elapsed / 1_000);
    } catch (error) {
      this.logger?.error({ err: error }, "emulator: the wall clock could not advance");
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
