import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import type { FaultMode } from "./options.ts";
import { Random, hash32 } from "./random.ts";

/**
 * Injected faults, drawn from the emulator's own seeded streams: the n-th API
 * request of an emulator meets the same fault on every run (concurrent
 * requests may of course arrive in another order). `mild` hits about 3% of
 * requests, `hostile` about 20%; each hit is one of the kinds below, chosen
 * evenly (`insert` only on paginated listings). `hostile` adds, on paginated
 * listings that drew none of those, 10% of hostile-only kinds, drawn from a
 * stream of their own so that the draws above stay what they always were.
 */

export type FaultKind =
  | "server-error"
  | "bad-gateway"
  | "unavailable"
  | "throttle"
  | "slow"
  | "drop"
  | "insert"
  | "delete"
  | "empty-page"
  | "sub-millisecond";

/** Faults that change what a paginated listing serves, applied by the listing itself. */
export type ListingFault = Extract<FaultKind, "insert" | "delete" | "empty-page" | "sub-millisecond">;

/** What a request is, as far as faults go: event listings can also meet the sub-millisecond fault. */
export type FaultScope = "request" | "listing" | "event-listing";

const RATES: Record<FaultMode, number> = { none: 0, mild: 0.03, hostile: 0.2 };
const ANY_REQUEST: readonly FaultKind[] = ["server-error", "bad-gateway", "unavailable", "throttle", "slow", "drop"];
const LISTING: readonly FaultKind[] = [...ANY_REQUEST, "insert"];
const HOSTILE_LISTING_RATE = 0.1;
const HOSTILE_LISTING: readonly FaultKind[] = ["delete", "empty-page"];
const HOSTILE_EVENT_LISTING: readonly FaultKind[] = [...HOSTILE_LISTING, "sub-millisecond"];
/** How many recently glitched requests are remembered, so that asking one again answers normally. */
const GLITCH_MEMORY = 64;

export class FaultInjector {
  private readonly random: Random;
  private readonly hostile: Random;
  /** Requests recently answered with an empty page, by account and URL. */
  private readonly glitched = new Set<string>();
  /** Draws for the content of records inserted by faults, apart from the simulation's own. */
  readonly content: Random;

  constructor(seed: number) {
    this.random = new Random(hash32(seed, 0xfa_017));
    this.hostile = new Random(hash32(seed, 0xfa_017, 0x4057));
    this.content = new Random(hash32(seed, 0xfa_c0de));
  }

  draw(mode: FaultMode, scope: FaultScope): FaultKind | undefined {
    if (mode === "none") return undefined;
    if (this.random.chance(RATES[mode])) return this.random.pick(scope === "request" ? ANY_REQUEST : LISTING);
    if (mode !== "hostile" || scope === "request" || !this.hostile.chance(HOSTILE_LISTING_RATE)) return undefined;
    return this.hostile.pick(scope === "event-listing" ? HOSTILE_EVENT_LISTING : HOSTILE_LISTING);
  }

  /**
   * Whether an empty-page glitch may hit this request (`request` names the account and URL): not when
   * the same request met one just before, since a glitch is transient and asking again must work.
   */
  mayGlitch(request: string): boolean {
    if (this.glitched.delete(request)) return false;
    if (this.glitched.size >= GLITCH_MEMORY) this.glitched.delete(this.glitched.values().next().value as string);
    this.glitched.add(request);
    return true;
  }

  /** A coin for the variants of one fault (e.g. HTML or JSON body). */
  flip(): boolean {
    return this.random.chance(0.5);
  }
}

function htmlPage(status: number, title: string): string {
  return `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body>\r\n<center><h1>${status} ${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * Answers a request-level fault. A 500 comes from the service itself and
 * carries {message}; 502 and 503 come from a proxy in front of it and often
 * carry an HTML page instead.
 */
export function answerFault(kind: "server-error" | "bad-gateway" | "unavailable" | "throttle", reply: FastifyReply, htmlBody: boolean): FastifyReply {
  switch (kind) {
    case "server-error":
      return reply.code(500).send({ message: "internal server error (injected fault)" });
    case "bad-gateway":
      return reply.code(502).type("text/html").send(htmlPage(502, "Bad Gateway"));
    case "unavailable":
      return htmlBody
        ? reply.code(503).type("text/html").send(htmlPage(503, "Service Temporarily Unavailable"))
        : reply.code(503).send({ message: "service unavailable (injected fault)" });
    case "throttle":
      return reply.code(429).header("retry-after", "1").send({ message: "too many requests (injected fault); retry after 1 second" });
  }
}

/**
 * A body that stops half-way: the headers promise the full length, half of
 * it is written, then the connection is destroyed.
 */
export function truncatedBody(reply: FastifyReply, payload: unknown): Readable {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === "string" ? payload : "");
  reply.header("content-length", bytes.length);
  const half = bytes.subarray(0, Math.floor(bytes.length / 2));
  let sent = false;
  return new Readable({
    read() {
      if (sent) return;
      sent = true;
      this.push(half);
      setImmediate(() => this.destroy(new Error("connection dropped (injected fault)")));
    },
  });
}
