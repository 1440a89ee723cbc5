import type { FastifyRequest } from "fastify";
import { PARAMS } from "../../upstream/endpoints.ts";
import type { PageQuery } from "../../upstream/requests.ts";
import { deleteBeforeOffset } from "../deletions.ts";
import { deviatePage, pageBody, type PageBody } from "../drift/pages.ts";
import type { Collection } from "../store/collection.ts";
import { takeListingFault, type EmulatorContext } from "./context.ts";

/**
 * What every answer that carries records goes through: a paginated page
 * (after the listing faults the request drew, with page-level drift), a
 * whole unpaginated listing, or one record, each record rendered clean and
 * then drifted when drift is on. With drift off, rendering is all there is.
 */

/** A paginated listing, and what each listing fault does to it. */
export interface ListingSource<T> {
  /** The path served, which names the records' shape for drift. */
  endpoint: string;
  collection: Collection<T>;
  render: (record: T) => unknown;
  /** The insert fault: a record of the listing's kind arrives. */
  insert(): void;
  /** The delete fault: deletes `record` and answers true, or answers false when it may not be deleted. */
  remove(record: T): boolean;
  /** The sub-millisecond fault, on event listings. */
  addSubMillisecondEvents?(): void;
}

/** Renders records, drifting them when drift is on; the check is once per answer, not per record. */
function renderAll<T>(context: EmulatorContext, endpoint: string, records: readonly T[], render: (record: T) => unknown): unknown[] {
  const { settings, recordDrift } = context;
  if (settings.drift === "none") return records.map(render);
  const drift = recordDrift.applier(settings, endpoint);
  return records.map((record) => drift(render(record)));
}

export function servePage<T>(context: EmulatorContext, request: FastifyRequest, query: PageQuery, source: ListingSource<T>): PageBody {
  const { world, settings, faults } = context;
  const { collection } = source;
  const asked = { offset: query[PARAMS.offset], limit: query[PARAMS.limit], total: 0 };
  const pageDeviation = context.pageDrift.draw(settings);
  switch (takeListingFault(request)) {
    case "insert":
      source.insert();
      break;
    case "delete":
      deleteBeforeOffset(world.lister, collection, settings.order, asked.offset, faults.content, (record) => source.remove(record));
      break;
    case "sub-millisecond":
      source.addSubMillisecondEvents?.();
      break;
    case "empty-page":
      // A transient glitch: nothing on the page, though the total says records remain.
      return { data: [], total: collection.length };
    case undefined:
      break;
  }
  const served = deviatePage(pageDeviation, { ...asked, total: collection.length });
  const records = world.lister.page(collection, settings.order, served.offset, served.limit);
  return pageBody(pageDeviation, renderAll(context, source.endpoint, records, source.render), served.total);
}

/** An unpaginated listing (#13, #18), whole. */
export function serveAll<T>(context: EmulatorContext, endpoint: string, collection: Collection<T>, render: (record: T) => unknown): unknown[] {
  return renderAll(context, endpoint, context.world.lister.all(collection, context.settings.order), render);
}

/** One record as `endpoint` serves it. */
export function serveRecord(context: EmulatorContext, endpoint: string, record: unknown): unknown {
  return context.settings.drift === "none" ? record : context.recordDrift.applier(context.settings, endpoint)(record);
}
