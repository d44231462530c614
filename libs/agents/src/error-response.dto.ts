import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ERROR_STATUS } from '@app/common';
import { ProblemDto } from './agents.responses.js';

export class ErrorObjectDto {
  @ApiProperty({ enum: Object.keys(ERROR_STATUS) }) code: string;
  @ApiProperty({ description: 'What was wrong and what to do instead' }) message: string;
  @ApiProperty({ type: [ProblemDto] }) details: ProblemDto[];
  @ApiPropertyOptional({ description: 'For internal errors: the id of the log line' }) errorId?: string;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorObjectDto }) error: ErrorObjectDto;
}
