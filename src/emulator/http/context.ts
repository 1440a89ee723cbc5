import type { FastifyRequest } from "fastify";
import type { Logger } from "../../logger.ts";
import type { WallClock } from "../clock.ts";
import type { PageDrift } from "../drift/pages.ts";
import type { RecordDrift } from "../drift/records.ts";
import type { FaultInjector, FaultKind, ListingFault } from "../faults.ts";
import type { RuntimeSettings } from "../options.ts";
import type { Account, World } from "../store/world.ts";
import type { RateLimiter } from "./rate-limit.ts";

/** What every route of one emulator shares. */
export interface EmulatorContext {
  world: World;
  settings: RuntimeSettings;
  faults: FaultInjector;
  recordDrift: RecordDrift;
  pageDrift: PageDrift;
  rateLimiter: RateLimiter;
  /** Catches simulated time up with real time before each request, in wall-clock mode. */
  clock: WallClock;
  logger?: Logger;
}

interface RequestState {
  account: Account;
  fault: FaultKind | undefined;
}

const states = new WeakMap<FastifyRequest, RequestState>();

export function attachState(request: FastifyRequest, state: RequestState): void {
  states.set(request, state);
}

export function stateOf(request: FastifyRequest): RequestState | undefined {
  return states.get(request);
}

/** The account of the request's API key; the gate has checked it before any handler runs. */
export function accountOf(request: FastifyRequest): Account {
  const state = states.get(request);
  if (!state) throw new Error("no account: the API gate did not run for this request");
  return state.account;
}

const LISTING_FAULTS: ReadonlySet<FaultKind> = new Set<ListingFault>(["insert", "delete", "empty-page", "sub-millisecond"]);

/** The fault this listing request drew that changes what the listing serves, if any (consumed once). */
export function takeListingFault(request: FastifyRequest): ListingFault | undefined {
  const state = states.get(request);
  const fault = state?.fault;
  if (!state || fault === undefined || !LISTING_FAULTS.has(fault)) return undefined;
  state.fault = undefined;
  return fault as ListingFault;
}
