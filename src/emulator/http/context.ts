import type { FastifyRequest } from "fastify";
import type { Logger } from "../../logger.ts";
import type { FaultInjector, FaultKind } from "../faults.ts";
import type { RuntimeSettings } from "../options.ts";
import type { Account, World } from "../store/world.ts";
import type { RateLimiter } from "./rate-limit.ts";

/** What every route of one emulator shares. */
export interface EmulatorContext {
  world: World;
  settings: RuntimeSettings;
  faults: FaultInjector;
  rateLimiter: RateLimiter;
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

/** Whether this listing request drew the "records arrive between pages" fault (consumed once). */
export function takeInsertFault(request: FastifyRequest): boolean {
  const state = states.get(request);
  if (state?.fault !== "insert") return false;
  state.fault = undefined;
  return true;
}
