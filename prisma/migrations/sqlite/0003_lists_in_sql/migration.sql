-- DropIndex
DROP INDEX "Agent_namespace_name_idx";

-- DropIndex
DROP INDEX "Operation_namespace_name_idx";

-- AlterTable
ALTER TABLE "Agent" ADD COLUMN "lastOperationId" TEXT;

-- CreateTable
CREATE TABLE "AgentLabel" (
    "agentId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL,

    PRIMARY KEY ("agentId", "key"),
    CONSTRAINT "AgentLabel_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "AgentLabel_key_value_state_namespace_name_agentId_idx" ON "AgentLabel"("key", "value", "state", "namespace", "name", "agentId");

-- CreateIndex
CREATE INDEX "AgentLabel_key_state_namespace_name_agentId_idx" ON "AgentLabel"("key", "state", "namespace", "name", "agentId");

-- CreateIndex
CREATE INDEX "Agent_namespace_name_id_idx" ON "Agent"("namespace", "name", "id");

-- CreateIndex
CREATE INDEX "Agent_state_namespace_name_id_idx" ON "Agent"("state", "namespace", "name", "id");

-- CreateIndex
CREATE INDEX "Operation_namespace_name_startedAt_idx" ON "Operation"("namespace", "name", "startedAt");

-- CreateIndex
CREATE INDEX "Operation_agentId_startedAt_idx" ON "Operation"("agentId", "startedAt");


-- Written by hand (prisma migrate diff writes no data): fill the new columns and table from
-- the rows already stored.

-- Backfill the labels from each agent's spec.labels.
INSERT INTO "AgentLabel" ("agentId", "key", "value", "namespace", "name", "state")
SELECT a."id", l."key", l."value", a."namespace", a."name", a."state"
FROM "Agent" a, json_each(a."spec", '$.labels') l;

-- Backfill each agent's last operation as reads found it until now: its own operations and the
-- creates of its name that never got an agent (for a deleted agent, those started before it was deleted).
UPDATE "Agent" SET "lastOperationId" = (
  SELECT o."id" FROM "Operation" o
  WHERE o."agentId" = "Agent"."id"
     OR (o."agentId" IS NULL AND o."namespace" = "Agent"."namespace" AND o."name" = "Agent"."name"
         AND ("Agent"."deletedAt" IS NULL OR o."startedAt" <= "Agent"."deletedAt"))
  ORDER BY o."startedAt" DESC, o."id" DESC
  LIMIT 1
);
