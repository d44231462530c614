// The entry-point layer every domain module's operations go through, for both doors (REST and
// MCP): an operation declared once (operation.ts), the wrapper that reads, authorizes, calls and
// redacts (operation-doors.ts), the generated REST controllers (rest-door.ts), the policy bound
// to a caller (access.ts), input parsing and DTO validators, and the error body. It knows no
// domain: the journal it writes refusals to is a port (refusal-journal.ts) a domain provides.
export { AgentAccess, CallerAccess, WRITE_OF_VALIDATE } from './access.js';
export { ACTOR_MAX, isRecordableActor, recordableActor } from './actor.js';
export { auditColumns, auditOf } from './audit-entry.js';
export type { AuditEntry, JournalReader } from './audit-entry.js';
export { ErrorObjectDto, ErrorResponseDto, errorExample, ProblemDto } from './error-response.dto.js';
export { acceptedFields, invalidInput, parseInput, readInput } from './input.js';
export { OperationDoors } from './operation-doors.js';
export { contributedOperations } from './contributed-operations.js';
export { defineOperation, operationNames } from './operation.js';
export type { AccessTarget, OperationDescriptor, OperationInput, OperationSet, RestReply, RestRoute, ToolDeclaration } from './operation.js';
export { answerForCaller, forCaller, isAdmin } from './redaction.js';
export { RefusalJournal } from './refusal-journal.js';
export type { Refusal } from './refusal-journal.js';
export { bodyRoutes, REST_PREFIX, restControllers, RestContextInterceptor, restPath, routePattern } from './rest-door.js';
export {
  IsLabelSelector,
  IsMetadataMap,
  IsToolset,
  labelSelectorProblem,
  MAX_ANNOTATION_BYTES,
  MAX_LABELS,
  MaxCodePoints,
  metadataCapProblem,
  metadataProblems,
  Optional,
  WholeNumberText,
} from './validators.js';
export { withWriteHeaders } from './write-headers.js';
export type { WriteHeaders } from './write-headers.js';
