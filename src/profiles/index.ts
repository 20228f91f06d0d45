/** Agent profiles (discovery, layers, compat mapping) and the model catalog (resolution, bounded queries). */

export {
  allCatalogs,
  choices,
  closeMatches,
  configModels,
  findModel,
  type RunnerCatalog,
  runnerCatalog,
} from "./catalog.js";
export { COMPAT_RUNNER, claudeModel, opencodeModel, piModel } from "./compat.js";
export {
  type BrokenProfile,
  compatEnabled,
  type DiscoverOptions,
  type Discovery,
  discoverProfiles,
  type LayerDir,
  markdownFiles,
  profileLayers,
} from "./discover.js";
export { isModelSpelling, isReasoningSpelling, PROFILE_NAME, readFrontmatter } from "./fields.js";
export { parseProfile } from "./parse.js";
export { assertProfileName, bundledProfileNames, listNames, loadProfile, profileDirs } from "./profile.js";
export {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type ModelQuery,
  type ModelRow,
  type ModelsAnswer,
  type QueryContext,
  queryModels,
} from "./query.js";
export {
  type ResolvedSettings,
  type ResolveInput,
  resolveResumeSettings,
  resolveSettings,
  type SettingSource,
} from "./settings.js";
export {
  LAYER_ORDER,
  type Profile,
  type ProfileFormat,
  type ProfileLayer,
  type ResolvedProfile,
} from "./types.js";
