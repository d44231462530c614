-- AlterTable
ALTER TABLE "Blueprint" ADD COLUMN     "activeBody" JSONB,
ADD COLUMN     "generation" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "Blueprint_generation_id_idx" ON "Blueprint"("generation", "id");

-- Backfill (by hand): each blueprint's active body, from its version row.
UPDATE "Blueprint" SET "activeBody" = (
    SELECT v."body" FROM "BlueprintVersion" v WHERE v."blueprintId" = "Blueprint"."id" AND v."version" = "Blueprint"."activeVersion"
);

-- By hand: pages of blueprints are ordered by name in code-point order, as on SQLite (schema.prisma).
ALTER TABLE "Blueprint" ALTER COLUMN "name" TYPE TEXT COLLATE "C";
