/**
 * What an ACP agent offers once a session is open — session modes, models, reasoning levels, as config options
 * (`configOptions`, the protocol's preferred form) or the older `modes` / unstable `models` — and applying the
 * child's choices to it: the profile's `acpMode`, the turn's model and reasoning. What the agent does not
 * offer is a warning, never a silent no-op; a mode it does not offer is an error (the profile asked for a
 * permission posture the child would not have).
 */
import { obj, splitModel, str } from "../common/shared.js";
import type { AgentSessionInfo, SessionSpec } from "../types.js";

type Request = (method: string, params: unknown) => Promise<unknown>;

interface Choice {
  /** What the agent takes when it is set (a config option value, a mode id, a model id). */
  value: string;
  name?: string;
}

/** One setting the agent offers and how to change it. */
interface Setting {
  choices: Choice[];
  current?: string;
  set: (sessionId: string, value: string) => [method: string, params: unknown];
}

export interface AcpOffer {
  mode?: Setting;
  model?: Setting;
  reasoning?: Setting;
}

const choicesOf = (list: unknown, key: string): Choice[] =>
  (Array.isArray(list) ? list.map(obj) : [])
    .filter((c) => str(c[key]) !== undefined)
    .map((c) => ({ value: c[key] as string, ...(str(c.name) ? { name: c.name as string } : {}) }));

/** The settings a session/new or session/load result offers. */
export function readOffer(result: unknown): AcpOffer {
  const r = obj(result);
  const offer: AcpOffer = {};
  const options = Array.isArray(r.configOptions) ? r.configOptions.map(obj) : [];
  const byCategory = (category: string): Setting | undefined => {
    const o = options.find((x) => x.category === category && x.type === "select" && str(x.id));
    if (!o) return undefined;
    const configId = o.id as string;
    return {
      choices: choicesOf(o.options, "value"),
      ...(str(o.currentValue) ? { current: o.currentValue as string } : {}),
      set: (sessionId, value) => ["session/set_config_option", { sessionId, configId, value }],
    };
  };
  // The older offer (before config options): a list, the value in force, and a method of its own to set it.
  const legacy = (list: unknown, idKey: string, current: unknown, method: string, param: string) =>
    Array.isArray(list)
      ? {
          choices: choicesOf(list, idKey),
          ...(str(current) ? { current: current as string } : {}),
          set: (sessionId: string, value: string) => [method, { sessionId, [param]: value }],
        }
      : undefined;
  const modes = obj(r.modes);
  const models = obj(r.models);
  const mode =
    byCategory("mode") ??
    legacy(modes.availableModes, "id", modes.currentModeId, "session/set_mode", "modeId");
  const model =
    byCategory("model") ??
    legacy(models.availableModels, "modelId", models.currentModelId, "session/set_model", "modelId");
  const reasoning = byCategory("thought_level");
  if (mode) offer.mode = mode as Setting;
  if (model) offer.model = model as Setting;
  if (reasoning) offer.reasoning = reasoning;
  return offer;
}

const lower = (s: string): string => s.toLowerCase();

/** The choice a spelling names: its value or name, whole or without muster's `provider:` prefix. */
function pick(setting: Setting, wanted: string): Choice | undefined {
  const spellings = [wanted, splitModel(wanted).id ?? wanted].map(lower);
  for (const s of spellings) {
    const hit =
      setting.choices.find((c) => lower(c.value) === s) ??
      setting.choices.find((c) => c.name !== undefined && lower(c.name) === s);
    if (hit) return hit;
  }
  return undefined;
}

const listed = (s: Setting): string => s.choices.map((c) => c.value).join(", ") || "none";

/**
 * Applies the spec's mode, model and reasoning to an open session; returns what the agent offers, the values
 * now in force and a warning for each choice it could not take. Throws when the profile's mode is not offered.
 */
export async function applySettings(
  request: Request,
  sessionId: string,
  offer: AcpOffer,
  spec: Pick<SessionSpec, "modeId" | "model" | "reasoning">,
): Promise<AgentSessionInfo> {
  const warnings: string[] = [];
  const now: { mode?: string; model?: string; reasoning?: string } = {
    ...(offer.mode?.current ? { mode: offer.mode.current } : {}),
    ...(offer.model?.current ? { model: offer.model.current } : {}),
    ...(offer.reasoning?.current ? { reasoning: offer.reasoning.current } : {}),
  };
  const apply = async (key: "mode" | "model" | "reasoning", setting: Setting, choice: Choice) => {
    if (setting.current === choice.value) return;
    const [method, params] = setting.set(sessionId, choice.value);
    await request(method, params);
    now[key] = choice.value;
  };
  if (spec.modeId) {
    const choice = offer.mode && pick(offer.mode, spec.modeId);
    if (!offer.mode) throw new Error(`acpMode "${spec.modeId}": this agent offers no session modes`);
    if (!choice)
      throw new Error(`acpMode "${spec.modeId}" is not a mode this agent offers (${listed(offer.mode)})`);
    await apply("mode", offer.mode, choice);
  }
  for (const [key, flag, wanted] of [
    ["model", "--model", spec.model],
    ["reasoning", "--reasoning", spec.reasoning],
  ] as const) {
    if (!wanted) continue;
    const setting = offer[key];
    const choice = setting && pick(setting, wanted);
    if (!setting) warnings.push(`the agent offers no ${key} choice: ${flag} ${wanted} is not applied`);
    else if (!choice)
      warnings.push(`the agent offers no ${key} "${wanted}" (${listed(setting)}): ${flag} is not applied`);
    else
      await apply(key, setting, choice).catch((e: Error) => {
        warnings.push(`the agent refused ${flag} ${wanted} (${e.message}): it is not applied`);
      });
  }
  // Bounded: an agent that offers every model of every provider still makes one small record.
  const values = (s: Setting | undefined) => s?.choices.slice(0, 100).map((c) => c.value);
  return {
    ...(offer.mode ? { modes: values(offer.mode) } : {}),
    ...(offer.model ? { models: values(offer.model) } : {}),
    ...(offer.reasoning ? { reasoningLevels: values(offer.reasoning) } : {}),
    ...now,
    warnings,
  };
}
