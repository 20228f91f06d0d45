import { isTmuxRef, LEGACY_BACKEND, type PaneRef, paneLabel } from "../mux/backend.js";
import { LOCAL_PLACE } from "../place/place.js";
import type { RegistryEntry } from "./registry.js";

/** Where a child's host runs, by its record (entries older than places ran here). */
export const placeNameOf = (entry: Pick<RegistryEntry, "place">): string => entry.place ?? LOCAL_PLACE;

/** The name of the backend a child runs in, by its record: its pane's, else the one it was spawned for. */
export const backendNameOf = (entry: Pick<RegistryEntry, "pane" | "backend">): string =>
  entry.pane?.backend ?? entry.backend ?? LEGACY_BACKEND;

/** Where a child's pane is, in one line: a tmux pane by id and session, another backend's by its label. */
export function paneWhere(pane: PaneRef | null): string {
  if (!pane) return "-";
  return isTmuxRef(pane)
    ? `${pane.paneId} in session ${pane.session}`
    : `${paneLabel(pane)} (${pane.backend})`;
}
