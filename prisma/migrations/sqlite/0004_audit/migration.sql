-- AlterTable
ALTER TABLE "Operation" ADD COLUMN "actorNote" TEXT;
ALTER TABLE "Operation" ADD COLUMN "authMethod" TEXT;
ALTER TABLE "Operation" ADD COLUMN "client" TEXT;
ALTER TABLE "Operation" ADD COLUMN "door" TEXT;
ALTER TABLE "Operation" ADD COLUMN "operation" TEXT;
ALTER TABLE "Operation" ADD COLUMN "requestId" TEXT;
ALTER TABLE "Operation" ADD COLUMN "subject" TEXT;

-- CreateIndex
CREATE INDEX "Operation_startedAt_id_idx" ON "Operation"("startedAt", "id");

-- CreateIndex
CREATE INDEX "Operation_subject_startedAt_idx" ON "Operation"("subject", "startedAt");

