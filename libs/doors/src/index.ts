// The entry-point layer every domain module's operations go through, for both doors (REST and
// MCP): an operation declared once, mostly as data (operation.ts), the wrapper that reads,
// authorizes, folds the write headers, calls and redacts (operation-doors.ts), the shared REST
// replies (replies.ts), the generated REST controllers (rest-door.ts), the policy bound
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
export type { AccessTarget, CommandOf, OperationDescriptor, OperationInput, OperationInputs, OperationSet, ReadOf, RestRoute, TargetOf, ToolDeclaration } from './operation.js';
export { replies } from './replies.js';
export type { RestReply } from './replies.js';
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
export type { RawWriteHeaders, WriteHeaders } from './write-headers.js';
