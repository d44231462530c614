-- DropIndex
DROP INDEX "Agent_namespace_name_idx";

-- DropIndex
DROP INDEX "Operation_namespace_name_idx";

-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "lastOperationId" TEXT;

-- CreateTable
CREATE TABLE "AgentLabel" (
    "agentId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL,

    CONSTRAINT "AgentLabel_pkey" PRIMARY KEY ("agentId","key")
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

-- AddForeignKey
ALTER TABLE "AgentLabel" ADD CONSTRAINT "AgentLabel_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Written by hand (prisma migrate diff writes no data and no collation): fill the new columns
-- and table from the rows already stored, then order the listing's columns by code point.

-- Backfill the labels from each agent's spec.labels.
INSERT INTO "AgentLabel" ("agentId", "key", "value", "namespace", "name", "state")
SELECT a."id", l."key", l."value", a."namespace", a."name", a."state"
FROM "Agent" a
CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(a."spec" -> 'labels') = 'object' THEN a."spec" -> 'labels' END) l;

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

-- The listing pages by (namespace, name, id) in code-point order, as SQLite's BINARY collation
-- does, whatever the database's default collation: the columns and their indexes take "C".
ALTER TABLE "Agent"
  ALTER COLUMN "id" TYPE TEXT COLLATE "C",
  ALTER COLUMN "namespace" TYPE TEXT COLLATE "C",
  ALTER COLUMN "name" TYPE TEXT COLLATE "C";
ALTER TABLE "AgentLabel"
  ALTER COLUMN "agentId" TYPE TEXT COLLATE "C",
  ALTER COLUMN "key" TYPE TEXT COLLATE "C",
  ALTER COLUMN "value" TYPE TEXT COLLATE "C",
  ALTER COLUMN "namespace" TYPE TEXT COLLATE "C",
  ALTER COLUMN "name" TYPE TEXT COLLATE "C";
