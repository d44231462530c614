export { Clock, SystemClock, TestClock } from './clock.js';
export { append, AppError, DEFAULT_RETRY_AFTER_SECONDS, ERROR_STATUS, listedProblems, MAX_LISTED_PROBLEMS } from './app-error.js';
export type { ErrorBody, ErrorCode, ErrorDetail } from './app-error.js';
export { mapError } from './error-mapping.js';
export type { MappedError } from './error-mapping.js';
export { AppConfig, ConfigError, isLoopbackHost, LOG_FORMATS, LOG_LEVELS, loadConfig, shown } from './app-config.js';
export type { LogFormat, LogLevel } from './app-config.js';
export { PROJECT_PACKAGE, PROJECT_ROOT } from './project-root.js';
export { comparableSubject, RESERVED_SUBJECT_PREFIXES, RESERVED_SUBJECTS, reservedSubjectPart } from './reserved-subjects.js';
export { Caller } from './caller.js';
export { PeriodicSweep } from './periodic-sweep.js';
export { OperationContexts } from './operation-context.js';
export type { CallFacts, Door, KubeIdentity, NewOperationContext, OperationContext } from './operation-context.js';
export {
  ApiBody,
  ApiConsumes,
  ApiExcludeController,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  ApiTags,
  applyOpenApiDecorators,
  OnOpenApiReplay,
} from './openapi-decorators.js';
export { MUSTER_CONFIG_KEY, parseMusterPresets } from './muster-presets.js';
export type { MusterPresetsLocation } from './muster-presets.js';
