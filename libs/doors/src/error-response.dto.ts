import { ApiProperty, ApiPropertyOptional, ERROR_STATUS, type ErrorBody, type ErrorCode, type ErrorDetail } from '@app/common';

export class ProblemDto {
  @ApiProperty({ description: 'Where: a field or a list item such as toolset[3]', example: 'toolset[0]' }) path: string;
  @ApiProperty({ description: 'What is wrong and what to do instead', example: 'preset "read-olny" is not a shipped preset; did you mean "read-only"?' }) message: string;
}

export class ErrorObjectDto {
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'invalid_request' }) code: string;
  @ApiProperty({ description: 'What was wrong and what to do instead', example: 'the request is invalid: see details' }) message: string;
  @ApiProperty({ type: [ProblemDto], description: 'One entry per field at fault; empty when no single field is' }) details: ProblemDto[];
  @ApiPropertyOptional({ description: 'For internal errors: the id of the log line', example: 'err-5f2c9d1a' }) errorId?: string;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorObjectDto }) error: ErrorObjectDto;
}

/** An error body as the service writes it, for the examples of the OpenAPI document. */
export function errorExample(code: ErrorCode, message: string, details: ErrorDetail[] = []): ErrorBody {
  return { error: { code, message, details } };
}
