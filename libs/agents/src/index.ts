export { AgentsModule } from './agents.module.js';
export { AgentsService } from './agents.service.js';
export type { Caller } from './agents.service.js';
export { ServiceInfoService, CAPABILITIES } from './service-info.service.js';
export * from './agents.dto.js';
export * from './agents.responses.js';
export { ErrorResponseDto, ErrorObjectDto } from './error-response.dto.js';
export { readInput, parseInput, acceptedFields } from './agents.input.js';
