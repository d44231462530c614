import { IsString, Matches, MaxLength } from 'class-validator';
import { ApiProperty } from '@app/common';
import { NAMESPACE_SCHEMA } from '../api/requests.dto.js';

const NAMESPACE_MESSAGE = 'namespace must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most 63 characters';

/** The namespace whose ModelConfigs are listed: REST's path parameter, the MCP tool's argument. */
export class ModelConfigsPathDto {
  @ApiProperty({ description: 'The Kubernetes namespace whose kagent ModelConfigs are listed (DNS-1123 label, at most 63 characters)', ...NAMESPACE_SCHEMA })
  @IsString()
  @Matches(new RegExp(NAMESPACE_SCHEMA.pattern), { message: NAMESPACE_MESSAGE })
  @MaxLength(63, { message: NAMESPACE_MESSAGE })
  namespace: string;
}

export const MODEL_CONFIG_READINESS = ['ready', 'notReady', 'unknown'] as const;
export type ModelConfigReadiness = (typeof MODEL_CONFIG_READINESS)[number];

/** One ModelConfig: never its API key, nor the Secret or key that holds it. */
export class ModelConfigDto {
  @ApiProperty({ description: "The ModelConfig's name: what an agent's modelConfig names", example: 'default-model-config' }) name: string;
  @ApiProperty({ description: 'spec.provider (kagent defaults it to OpenAI)', type: String, nullable: true, example: 'OpenAI' }) provider: string | null;
  @ApiProperty({ description: 'spec.model', type: String, nullable: true, example: 'gpt-4.1-mini' }) model: string | null;
  @ApiProperty({
    description:
      "From kagent's conditions: the Ready condition when there is one, else Accepted (the one kagent sets on a ModelConfig): True is ready, False notReady; none yet, or Unknown, is unknown",
    enum: MODEL_CONFIG_READINESS,
    example: 'ready',
  })
  readiness: ModelConfigReadiness;
  @ApiProperty({ description: "The deciding condition's reason (its message is not shown: it can name the Secret)", type: String, nullable: true, example: 'ModelConfigReconciled' })
  reason: string | null;
}

export class ModelConfigListDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ type: [ModelConfigDto], description: 'Every ModelConfig of the namespace, by name' }) items: ModelConfigDto[];
}
