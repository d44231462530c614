import { AppError } from '@app/common';

/**
 * A write whose outcome is not known: helm applied it but it could not be recorded (the store
 * failed, or the lock on the agent was lost), or helm failed talking to the cluster part-way. The
 * key stays claimed, linked to the operation, for a retry to settle from what helm holds (or the
 * reconciler to complete) rather than run the write blindly a second time.
 */
export class UncertainWrite extends AppError {
  static of(error: AppError): UncertainWrite {
    return new UncertainWrite(error.code, error.message, error.details, error.retryAfterSeconds);
  }
}
