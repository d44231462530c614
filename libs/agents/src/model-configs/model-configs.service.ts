import { Injectable } from '@nestjs/common';
import { KUBE_READ_TIMEOUT_MS, ModelConfigReader } from '@app/kube';
import { modelConfigView } from './model-config-check.js';
import type { ModelConfigListDto } from './model-configs.dto.js';

/** The kagent ModelConfigs a namespace has, read from the cluster as the caller (never their Secrets). */
@Injectable()
export class ModelConfigsService {
  constructor(private readonly reader: ModelConfigReader) {}

  /** Every ModelConfig of `namespace`, by name: forbidden (403) when the caller may not list them, not_found when the cluster has no ModelConfig API, backend_error when it cannot be read. */
  async list(namespace: string): Promise<ModelConfigListDto> {
    const items = await this.reader.list(namespace, KUBE_READ_TIMEOUT_MS);
    return { namespace, items: items.map(modelConfigView) };
  }
}
